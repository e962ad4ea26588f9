import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { MemoryService, MemorySchema, type Memory } from "@3ngram/proto/memory/v1";
import { SCOPES, type CallContext, type Handlers, type Policies } from "@3ngram/rpc";
import { DEFAULT_GET_CONTENT_CHARS, cutText, getMemoriesInputSchema, memoryIdSchema, parseInput, rememberInputSchema } from "@3ngram/schema";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { MemoryRow } from "../db/memories.js";
import type { Actor, MemoryDeps } from "../domain/deps.js";
import { getMemories } from "../domain/get-memories.js";
import { remember } from "../domain/remember.js";
import { storeEmbedding } from "../domain/store-embedding.js";
import { resolveApiKey } from "../domain/tenants.js";

const ACTOR_KINDS = new Set<Actor["kind"]>(["user_mcp", "user_api", "worker", "importer", "system"]);

function actorOf(ctx: CallContext): Actor {
  const claimed = ctx.caller.actor as Actor["kind"] | undefined;
  const kind = claimed && ACTOR_KINDS.has(claimed) ? claimed : ctx.caller.issuer === "consolidator" ? "worker" : "system";
  return { tenantId: ctx.tenantId, userId: ctx.userId, kind };
}

/** The one domain → wire mapping for a memory. */
export function toProtoMemory(row: MemoryRow, maxContentChars: number): MessageInitShape<typeof MemorySchema> {
  const content = cutText(row.content, maxContentChars);
  return {
    id: row.id,
    memoryType: row.memoryType,
    topic: row.topic,
    content: content.text,
    contentLength: content.contentLength,
    truncated: content.truncated,
    scope: row.scope,
    ...(row.project !== null ? { project: row.project } : {}),
    tags: row.tags,
    status: row.status,
    validFrom: timestampFromDate(row.validFrom),
    ...(row.validTo ? { validTo: timestampFromDate(row.validTo) } : {}),
    recordedAt: timestampFromDate(row.recordedAt),
    embeddingState: row.embedded ? "done" : "pending",
  } satisfies Partial<Memory>;
}

export function memoryHandlers(deps: MemoryDeps): Handlers<typeof MemoryService> {
  return {
    async remember(request, ctx) {
      // proto3 has no "absent" for strings: empty means "use the default".
      const input = parseInput(rememberInputSchema, {
        memoryType: request.memoryType,
        topic: request.topic,
        content: request.content,
        ...(request.scope !== "" ? { scope: request.scope } : {}),
        ...(request.project !== undefined ? { project: request.project } : {}),
        tags: request.tags,
      });
      const result = await remember(deps, actorOf(ctx), input);
      return { memory: toProtoMemory(result.memory, DEFAULT_GET_CONTENT_CHARS), embedded: result.embedded };
    },

    async getMemories(request, ctx) {
      const input = parseInput(getMemoriesInputSchema, {
        ids: request.ids,
        ...(request.maxContentChars !== 0 ? { maxContentChars: request.maxContentChars } : {}),
      });
      const result = await getMemories(deps, actorOf(ctx), input);
      return {
        memories: result.memories.map((m) => toProtoMemory(m, input.maxContentChars)),
        notFound: result.notFound,
      };
    },

    async storeEmbedding(request, ctx) {
      const memoryId = parseInput(memoryIdSchema, request.memoryId);
      return storeEmbedding(deps, actorOf(ctx), { memoryId, model: request.model, vector: request.vector });
    },

    async resolveApiKey(request) {
      const row = await resolveApiKey(deps.pool, deps.runtimeRole, request.apiKey);
      return { tenantId: row.tenantId, userId: row.userId, scopes: row.scopes, keyId: row.keyId };
    },
  };
}

export const memoryPolicies: Policies<typeof MemoryService> = {
  remember: { anyScope: [SCOPES.write], tenant: true },
  getMemories: { anyScope: [SCOPES.read], tenant: true },
  storeEmbedding: { anyScope: [SCOPES.internalEmbed], tenant: true },
  resolveApiKey: { anyScope: [SCOPES.internalAuth], tenant: false },
};
