import type { MemoryService } from "@3ngram/proto/memory/v1";
import { AppError } from "@3ngram/errors";
import { SCOPES, type Handlers, type Policies } from "@3ngram/rpc";
import type { MemoryDeps } from "../domain/deps.js";

// Bulk NDJSON import and paged export.
type ArchiveMethods = "import" | "export";

export function archiveHandlers(_deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, ArchiveMethods> {
  return {
    async import() {
      throw new AppError("internal_error", "import is not implemented yet");
    },
    async export() {
      throw new AppError("internal_error", "export is not implemented yet");
    },
  };
}

export const archivePolicies: Pick<Policies<typeof MemoryService>, ArchiveMethods> = {
  import: { anyScope: [SCOPES.read], tenant: true },
  export: { anyScope: [SCOPES.read], tenant: true },
};
