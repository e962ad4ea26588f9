/**
 * Import and export as the gateway sees them: the one mapping between the memory service's
 * Import/Export messages and the public shapes in @3ngram/schema (archive.ts).
 */
import type { ExportResponse, ImportResponse } from "@3ngram/proto/memory/v1";
import type { CallerIdentity } from "@3ngram/rpc";
import { importOutputSchema, type ImportFormat, type ImportOutput } from "@3ngram/schema";
import type { MemoryClient } from "./memory.js";

/** An import stores each record in its own transaction; a full 32 MB file takes minutes, not seconds. */
const IMPORT_DEADLINE_MS = 15 * 60_000;
/** One export page (at most 500 lines, about 2 MB). */
const EXPORT_PAGE_DEADLINE_MS = 60_000;

/** `signal` aborting (the client went away) cancels the import between two records; those stored stay stored. */
export async function importArchive(
  memory: MemoryClient,
  input: { format: ImportFormat; ndjson: string },
  identity: CallerIdentity,
  signal?: AbortSignal,
): Promise<ImportOutput> {
  const response = await memory.import(
    { format: input.format, ndjson: input.ndjson },
    { identity, deadlineMs: IMPORT_DEADLINE_MS, ...(signal ? { signal } : {}) },
  );
  return toImportOutput(input.format, response);
}

function toImportOutput(format: ImportFormat, response: ImportResponse): ImportOutput {
  return importOutputSchema.parse({
    format,
    results: response.results.map((r) => ({
      line: r.line,
      outcome: r.outcome,
      ...(r.id !== undefined ? { id: r.id } : {}),
      ...(r.reason !== undefined ? { reason: r.reason } : {}),
      ...(r.message !== undefined ? { message: r.message } : {}),
    })),
    created: response.created,
    skipped: response.skipped,
    failed: response.failed,
  });
}

/** One page of the archive: its NDJSON lines and the cursor of the next page (null after the last). */
export async function exportPage(memory: MemoryClient, cursor: string | null, identity: CallerIdentity): Promise<{ lines: string[]; next: string | null }> {
  return toExportPage(await memory.export({ cursor: cursor ?? "" }, { identity, deadlineMs: EXPORT_PAGE_DEADLINE_MS }));
}

function toExportPage(response: ExportResponse): { lines: string[]; next: string | null } {
  return { lines: response.lines, next: response.nextCursor === "" ? null : response.nextCursor };
}
