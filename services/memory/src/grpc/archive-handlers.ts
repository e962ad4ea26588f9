import type { MemoryService } from "@3ngram/proto/memory/v1";
import { SCOPES, type Handlers, type Policies } from "@3ngram/rpc";
import { exportInputSchema, importQuerySchema, parseInput } from "@3ngram/schema";
import type { MemoryDeps } from "../domain/deps.js";
import { exportPage } from "../domain/export.js";
import { importArchive } from "../domain/import.js";
import { actorOf } from "./mappers.js";

// Bulk NDJSON import and paged export.
type ArchiveMethods = "import" | "export";

export function archiveHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, ArchiveMethods> {
  return {
    async import(request, ctx) {
      // proto3 has no absent string: an empty format means the default (our own archive).
      const { format } = parseInput(importQuerySchema, request.format === "" ? {} : { format: request.format });
      return importArchive(deps, actorOf(ctx), { format, ndjson: request.ndjson }, ctx.signal);
    },
    async export(request, ctx) {
      const input = parseInput(exportInputSchema, request.cursor === "" ? {} : { cursor: request.cursor });
      return exportPage(deps, actorOf(ctx), input);
    },
  };
}

export const archivePolicies: Pick<Policies<typeof MemoryService>, ArchiveMethods> = {
  import: { anyScope: [SCOPES.write], tenant: true },
  export: { anyScope: [SCOPES.read], tenant: true },
};
