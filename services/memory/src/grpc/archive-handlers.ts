import { MemoryService } from "@3ngram/proto/memory/v1";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { memoryContracts } from "@3ngram/schema";
import type { MemoryDeps } from "../domain/deps.js";
import { exportPage } from "../domain/export.js";
import { importArchive } from "../domain/import.js";
import { actorOf } from "./mappers.js";

// Bulk NDJSON import and paged export.

export function archiveHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, keyof typeof archivePolicies> {
  return bridgeHandlers(MemoryService, memoryContracts.archive, {
    import: async (input, ctx) => ({ format: input.format, ...(await importArchive(deps, actorOf(ctx), input, ctx.signal)) }),
    export: async (input, ctx) => exportPage(deps, actorOf(ctx), input),
  });
}

export const archivePolicies = {
  import: { anyScope: [SCOPES.write], tenant: true },
  export: { anyScope: [SCOPES.read], tenant: true },
} satisfies Partial<Policies<typeof MemoryService>>;
