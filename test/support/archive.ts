/**
 * Whole NDJSON files through ArchiveService's streams, for tests that care about what an import
 * or export does rather than how it is cut into messages.
 */
import type { ArchiveService } from "@3ngram/proto/memory/v1";
import type { CallOptions, RequestInitOf, RpcClient } from "@3ngram/rpc";

type ArchiveClient = RpcClient<typeof ArchiveService>;
type ImportMessage = RequestInitOf<typeof ArchiveService, "import">;

/**
 * The messages of an import: the options, then the file in pieces of about `pieceChars` characters
 * (never splitting a surrogate pair, which would not survive UTF-8), then the end message.
 */
export function* importMessages(input: { format?: string; ndjson: string }, pieceChars = 64 * 1024): Generator<ImportMessage> {
  yield { part: { case: "options", value: input.format === undefined ? {} : { format: input.format } } };
  for (let start = 0; start < input.ndjson.length;) {
    let end = Math.min(start + pieceChars, input.ndjson.length);
    const code = input.ndjson.charCodeAt(end - 1);
    if (end < input.ndjson.length && code >= 0xd800 && code <= 0xdbff) end += 1;
    yield { part: { case: "ndjson", value: input.ndjson.slice(start, end) } };
    start = end;
  }
  yield { part: { case: "end", value: true } };
}

/** Imports a whole file as one stream. */
export function importFile(archive: ArchiveClient, input: { format?: string; ndjson: string }, options: CallOptions) {
  return archive.import(importMessages(input), options);
}

/** The whole export stream: each record as its NDJSON line, and the resume cursors it carried (by line index). */
export async function exportFile(archive: ArchiveClient, options: CallOptions, cursor?: string): Promise<{ lines: string[]; cursors: Map<number, string> }> {
  const lines: string[] = [];
  const cursors = new Map<number, string>();
  for await (const message of archive.export(cursor === undefined ? {} : { cursor }, options)) {
    if (message.cursor !== undefined) cursors.set(lines.length, message.cursor);
    lines.push(JSON.stringify(message.record));
  }
  return { lines, cursors };
}
