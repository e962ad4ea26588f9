import type { MemoryService } from "@3ngram/proto/memory/v1";
import { AppError } from "@3ngram/errors";
import { SCOPES, type Handlers, type Policies } from "@3ngram/rpc";
import { MAX_IMPORT_CONTENT_LENGTH, memoryIdSchema, parseInput } from "@3ngram/schema";
import type { MemoryDeps } from "../domain/deps.js";
import { getMemories } from "../domain/get-memories.js";
import { actorOf, toProtoMemory } from "./mappers.js";

// The MCP memory resource: one memory, whole.
type ResourceMethods = "readMemory";

export function resourceHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, ResourceMethods> {
  return {
    async readMemory(request, ctx) {
      const id = parseInput(memoryIdSchema, request.id);
      // The same tenant-scoped read as GetMemories; a foreign id is simply not among the rows.
      const { memories } = await getMemories(deps, actorOf(ctx), { ids: [id], maxContentChars: MAX_IMPORT_CONTENT_LENGTH });
      const row = memories[0];
      if (row === undefined) throw new AppError("not_found", `memory ${id.toLowerCase()} not found`, { ids: { memory: id.toLowerCase() } });
      // No stored content is longer than the import bound, so nothing is cut here.
      return { memory: toProtoMemory(row, MAX_IMPORT_CONTENT_LENGTH) };
    },
  };
}

export const resourcePolicies: Pick<Policies<typeof MemoryService>, ResourceMethods> = {
  readMemory: { anyScope: [SCOPES.read], tenant: true },
};
