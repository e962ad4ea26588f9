/**
 * The one resource template, threengram://memory/{id}: a memory's immutable projection with its
 * whole stored content (get_memories bounds content per item; this does not). It carries the
 * same guards as the read tools: memory:read from the verified principal, the tenant from the
 * credential, and an unknown, malformed or other tenant's id all answer the same "not found".
 * resources/list names no memories (the template has no list callback), so the corpus is never
 * enumerable, and {id} is not completable for the same reason.
 */
import { AppError, toAppError } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import { errorSummary, type Logger } from "@3ngram/runtime";
import { memoryIdSchema } from "@3ngram/schema";
import {
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
  type McpServer,
  type ReadResourceResult,
} from "@modelcontextprotocol/server";
import { fromAuthInfo } from "../auth/api-key.js";
import type { MemoryPeer } from "../clients/memory.js";
import { MEMORY_RESOURCE_NAME, MEMORY_RESOURCE_TEMPLATE } from "./catalog.js";
import { isCallerFault, toolErrorText } from "./errors.js";

const MEMORY_RESOURCE_MIME_TYPE = "application/json";

export interface ResourceDeps {
  memory: MemoryPeer;
  log: Logger;
}

export function registerMemoryResource(server: McpServer, deps: ResourceDeps): void {
  server.registerResource(
    MEMORY_RESOURCE_NAME,
    new ResourceTemplate(MEMORY_RESOURCE_TEMPLATE, { list: undefined }),
    {
      title: "Memory",
      description:
        "One stored memory as JSON: id, memoryType, topic, the full content (not cut, unlike get_memories), " +
        "contentLength, scope, project and recordedAt. Only fields that never change, so a cached copy stays valid; " +
        "status and supersession are read with get_memories.",
      mimeType: MEMORY_RESOURCE_MIME_TYPE,
    },
    async (uri, variables, ctx): Promise<ReadResourceResult> => {
      const auth = fromAuthInfo(ctx.http?.authInfo);
      const requestId = auth?.requestId ?? "unknown";
      const log = deps.log.child({ request_id: requestId, resource: MEMORY_RESOURCE_NAME });
      try {
        if (auth === undefined) throw new AppError("unauthenticated", "no verified principal");
        const { principal } = auth;
        if (!principal.scopes.includes(SCOPES.read)) throw new AppError("insufficient_scope", `${SCOPES.read} required`);
        const id = memoryIdSchema.safeParse(typeof variables.id === "string" ? variables.id : undefined);
        if (!id.success) throw new AppError("not_found", "memory not found");
        const identity = { tenantId: principal.tenantId, userId: principal.userId, scopes: principal.scopes, actor: "user_mcp" };
        const body = await deps.memory.memories.readMemory({ id: id.data }, { identity });
        log.info({ outcome: "ok", content_length: body.contentLength }, "resource read");
        return { contents: [{ uri: uri.href, mimeType: MEMORY_RESOURCE_MIME_TYPE, text: JSON.stringify(body) }] };
      } catch (err) {
        const appError = toAppError(err);
        if (isCallerFault(appError)) log.warn({ outcome: appError.reason }, "resource read refused");
        else log.error({ outcome: appError.reason, error: errorSummary(err) }, "resource read failed");
        // Unknown, malformed and foreign ids are indistinguishable: the SDK's own "not found".
        if (appError.reason === "not_found") throw new ResourceNotFoundError(uri.href);
        const code = isCallerFault(appError) ? ProtocolErrorCode.InvalidRequest : ProtocolErrorCode.InternalError;
        throw new ProtocolError(code, toolErrorText(appError, requestId), { reason: appError.reason });
      }
    },
  );
}
