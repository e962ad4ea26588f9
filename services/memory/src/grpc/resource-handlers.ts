import { MemoryService } from "@3ngram/proto/memory/v1";
import { AppError } from "@3ngram/errors";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { MAX_IMPORT_CONTENT_LENGTH, memoryContract } from "@3ngram/schema";
import type { MemoryDeps } from "../domain/deps.js";
import { getMemories } from "../domain/get-memories.js";
import { actorOf } from "./mappers.js";

// The MCP memory resource: one memory, whole.

export function resourceHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, keyof typeof resourcePolicies> {
  return bridgeHandlers(MemoryService, memoryContract, {
    async readMemory({ id }, ctx) {
      // The same tenant-scoped read as GetMemories; a foreign id is simply not among the rows.
      const { memories } = await getMemories(deps, actorOf(ctx), { ids: [id], maxContentChars: MAX_IMPORT_CONTENT_LENGTH });
      const row = memories[0];
      if (row === undefined) throw new AppError("not_found", `memory ${id.toLowerCase()} not found`, { ids: { memory: id.toLowerCase() } });
      // No stored content is longer than the import bound, so the whole text goes out.
      const { memoryType, topic, content, scope, project } = row;
      return { id: row.id, memoryType, topic, content, contentLength: content.length, scope, project, recordedAt: row.recordedAt.toISOString() };
    },
  });
}

export const resourcePolicies = {
  readMemory: { anyScope: [SCOPES.read], tenant: true },
} satisfies Partial<Policies<typeof MemoryService>>;
