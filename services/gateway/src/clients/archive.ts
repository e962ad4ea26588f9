/**
 * Import and export as the gateway calls them (through the bridge), with their deadlines.
 */
import type { CallerIdentity } from "@3ngram/rpc";
import type { ImportFormat, ImportOutput } from "@3ngram/schema";
import { memoryApi, type MemoryClient } from "./memory.js";

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
  return memoryApi(memory).archive.import(input, { identity, deadlineMs: IMPORT_DEADLINE_MS, ...(signal ? { signal } : {}) });
}

/** One page of the archive: its NDJSON lines and the cursor of the next page (null after the last). */
export async function exportPage(memory: MemoryClient, cursor: string | null, identity: CallerIdentity): Promise<{ lines: string[]; next: string | null }> {
  const page = await memoryApi(memory).archive.export({ cursor: cursor ?? undefined }, { identity, deadlineMs: EXPORT_PAGE_DEADLINE_MS });
  return { lines: page.lines, next: page.nextCursor === "" ? null : page.nextCursor };
}
