import { ArchiveService } from "@3ngram/proto/memory/v1";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { memoryContracts } from "@3ngram/schema";
import type { MemoryDeps } from "../domain/deps.js";
import { erase } from "../domain/erasure.js";
import { exportRecords } from "../domain/export.js";
import { importArchive } from "../domain/import.js";
import { actorOf } from "./actor.js";

// ArchiveService: the streamed import and export, and erasure (memory:erase only, which no
// credential holds unless it was asked for by name).

export function archiveHandlers(deps: MemoryDeps): Handlers<typeof ArchiveService> {
  return bridgeHandlers(ArchiveService, memoryContracts.archive, {
    import: async (parts, ctx) => importArchive(deps, actorOf(ctx), parts, ctx.signal),
    export: (input, ctx) => exportRecords(deps, actorOf(ctx), input, ctx.signal),
    erase: async (input, ctx) => erase(deps, actorOf(ctx), input),
  });
}

export const archivePolicies: Policies<typeof ArchiveService> = {
  import: { anyScope: [SCOPES.write], tenant: true },
  export: { anyScope: [SCOPES.read], tenant: true },
  erase: { anyScope: [SCOPES.erase], tenant: true },
};
