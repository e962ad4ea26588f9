/**
 * Whole NDJSON files through ArchiveService's streams, for tests that care about what an import
 * or export does rather than how it is cut into messages.
 */
import { ArchiveService } from "@3ngram/proto/memory/v1";
import { bridgeClient, type CallOptions, type RequestInitOf, type RpcMethods } from "@3ngram/rpc";
import { memoryContracts, type ImportFormat } from "@3ngram/schema";

type ArchiveClient = RpcMethods<typeof ArchiveService>;
type ImportMessage = RequestInitOf<typeof ArchiveService, "import">;

/** The file in pieces of about `pieceChars` characters (never splitting a surrogate pair, which would not survive UTF-8). */
function* pieces(ndjson: string, pieceChars: number): Generator<string> {
  for (let start = 0; start < ndjson.length;) {
    let end = Math.min(start + pieceChars, ndjson.length);
    const code = ndjson.charCodeAt(end - 1);
    if (end < ndjson.length && code >= 0xd800 && code <= 0xdbff) end += 1;
    yield ndjson.slice(start, end);
    start = end;
  }
}

/** The proto messages of an import, as any gRPC client sends them: the options, then the file in pieces, then the end message. */
export function* importMessages(input: { format?: string; ndjson: string }, pieceChars = 64 * 1024): Generator<ImportMessage> {
  yield { part: { case: "options", value: input.format === undefined ? {} : { format: input.format } } };
  for (const piece of pieces(input.ndjson, pieceChars)) yield { part: { case: "ndjson", value: piece } };
  yield { part: { case: "end", value: true } };
}

// The same, in the public shape (ImportPart) the bridge writes as those messages.
function* importParts(input: { format?: ImportFormat; ndjson: string }) {
  yield { options: input.format === undefined ? {} : { format: input.format } };
  for (const piece of pieces(input.ndjson, 64 * 1024)) yield { ndjson: piece };
  yield { end: true as const };
}

/** Imports a whole file as one stream, through the bridge: the answer in the public shape (outcomes by name), as the gateway reads it. */
export function importFile(archive: ArchiveClient, input: { format?: ImportFormat; ndjson: string }, options: CallOptions) {
  return bridgeClient(ArchiveService, memoryContracts.archive, archive).import(importParts(input), options);
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
