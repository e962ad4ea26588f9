/**
 * The memory service's ArchiveService as the gateway calls it (on the memory peer): the streamed
 * import and export with their deadlines. It rides the memory peer's channel; the streams keep
 * every message small, so the channel needs no raised message limits.
 */
import type { CallerIdentity } from "@3ngram/rpc";
import type { ImportFormat, ImportOutput, ImportPart } from "@3ngram/schema";
import type { MemoryPeer } from "./memory.js";

/** An import stores each record in its own transaction; a full 32 MB file takes minutes, not seconds. */
const IMPORT_DEADLINE_MS = 15 * 60_000;
/**
 * The whole export is one stream, read as fast as the HTTP client takes it; this bounds a client
 * that stalls. At the ~20k records a second one export stream moves, 30 minutes is a very large
 * tenant behind a slow link.
 */
const EXPORT_DEADLINE_MS = 30 * 60_000;

/**
 * Streams the options, then the file's pieces as `pieces` yields them (each becomes one message,
 * so keep them well under 4 MiB), then the end message once `pieces` has run out. `signal` aborting (the client went away) cancels the import:
 * before the last piece nothing is stored; after it, the import stops between two records and
 * those stored stay stored.
 */
export async function importArchive(
  memory: MemoryPeer,
  format: ImportFormat,
  pieces: AsyncIterable<string>,
  identity: CallerIdentity,
  signal?: AbortSignal,
): Promise<ImportOutput> {
  async function* parts(): AsyncGenerator<ImportPart> {
    yield { options: { format } };
    for await (const ndjson of pieces) if (ndjson.length > 0) yield { ndjson };
    // Only a source that ran to its end says so; one that failed or was cancelled never gets here.
    yield { end: true };
  }
  return memory.archive.import(parts(), { identity, deadlineMs: IMPORT_DEADLINE_MS, ...(signal ? { signal } : {}) });
}

/** The whole archive as a stream of NDJSON lines (each without its newline); leaving the loop early cancels the export. */
export async function* exportLines(memory: MemoryPeer, identity: CallerIdentity): AsyncGenerator<string> {
  for await (const { record } of memory.archive.export({}, { identity, deadlineMs: EXPORT_DEADLINE_MS })) yield JSON.stringify(record);
}
