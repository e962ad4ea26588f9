import { MemoriesService } from "@3ngram/proto/memory/v1";
import { AppError } from "@3ngram/errors";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { MAX_CONTENT_LENGTH, MAX_IMPORT_CONTENT_LENGTH, memoryContracts } from "@3ngram/schema";
import { archive } from "../domain/archive.js";
import type { MemoryDeps } from "../domain/deps.js";
import { getFacets } from "../domain/facets.js";
import { getFacts } from "../domain/get-facts.js";
import { getMemories } from "../domain/get-memories.js";
import { getHistory } from "../domain/history.js";
import { listMemories } from "../domain/list-memories.js";
import { factRecord, memoryRecord, memorySummary } from "../domain/records.js";
import { remember } from "../domain/remember.js";
import { resolve } from "../domain/resolve.js";
import { revise } from "../domain/revise.js";
import { actorOf } from "./actor.js";

// MemoriesService: writing, changing and reading individual memories, their history and facts.

/** History shows each lineage member whole as a tool wrote it; longer imported text is cut. */
const HISTORY_CONTENT_CHARS = MAX_CONTENT_LENGTH;

export function memoriesHandlers(deps: MemoryDeps): Handlers<typeof MemoriesService> {
  return bridgeHandlers(MemoriesService, memoryContracts.memories, {
    remember: async (input, ctx) => remember(deps, actorOf(ctx), input),
    async getMemories(input, ctx) {
      const result = await getMemories(deps, actorOf(ctx), input);
      const memories = result.memories.map((m) => memoryRecord(m, input.maxContentChars));
      return { memories, count: memories.length, notFound: result.notFound };
    },
    revise: async (input, ctx) => revise(deps, actorOf(ctx), input),
    resolve: async (input, ctx) => resolve(deps, actorOf(ctx), input),
    archive: async (input, ctx) => archive(deps, actorOf(ctx), input),
    async getHistory(input, ctx) {
      const history = await getHistory(deps, actorOf(ctx), input);
      return {
        memoryId: history.memoryId,
        lifecycleState: history.lifecycleState,
        lineage: history.lineage.map((m) => memoryRecord(m, HISTORY_CONTENT_CHARS)),
        edges: history.edges,
        events: history.events.map(({ id: _id, ...e }) => e),
      };
    },
    async getFacts(input, ctx) {
      const facts = (await getFacts(deps, actorOf(ctx), input)).map(factRecord);
      return { facts, count: facts.length };
    },
    async readMemory({ id }, ctx) {
      // The same tenant-scoped read as GetMemories; a foreign id is simply not among the rows.
      const { memories } = await getMemories(deps, actorOf(ctx), { ids: [id], maxContentChars: MAX_IMPORT_CONTENT_LENGTH });
      const row = memories[0];
      if (row === undefined) throw new AppError("not_found", `memory ${id.toLowerCase()} not found`, { ids: { memory: id.toLowerCase() } });
      // No stored content is longer than the import bound, so the whole text goes out.
      const { memoryType, topic, content, scope, project, recordedAt } = row;
      return { id: row.id, memoryType, topic, content, contentLength: content.length, scope, project, recordedAt };
    },
    async listMemories(input, ctx) {
      const page = await listMemories(deps, actorOf(ctx), input);
      return { memories: page.memories.map(memorySummary), count: page.memories.length, total: page.total };
    },
    getFacets: async (_input, ctx) => getFacets(deps, actorOf(ctx)),
  });
}

export const memoriesPolicies = {
  remember: { anyScope: [SCOPES.write], tenant: true },
  getMemories: { anyScope: [SCOPES.read], tenant: true },
  revise: { anyScope: [SCOPES.write], tenant: true },
  resolve: { anyScope: [SCOPES.write], tenant: true },
  archive: { anyScope: [SCOPES.write], tenant: true },
  getHistory: { anyScope: [SCOPES.read], tenant: true },
  getFacts: { anyScope: [SCOPES.read], tenant: true },
  readMemory: { anyScope: [SCOPES.read], tenant: true },
  listMemories: { anyScope: [SCOPES.read], tenant: true },
  getFacets: { anyScope: [SCOPES.read], tenant: true },
} satisfies Policies<typeof MemoriesService>;
