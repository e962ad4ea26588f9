/**
 * The reading half of an import: the stream of messages checked for order and size, the file split
 * into lines as its pieces arrive, and each line parsed and validated on its own (our archive's
 * records, the reference MCP memory server's knowledge-graph lines, mem0's memories, or
 * basic-memory's notes). Nothing here touches the database: import.ts stores what this answers.
 */
import { AppError } from "@3ngram/errors";
import {
  MAX_IMPORT_BODY_BYTES,
  MAX_IMPORT_RECORDS,
  archiveHeaderSchema,
  archiveRecordSchema,
  parseInput,
  type ArchiveRecord,
  type ImportFormat,
  type ImportPart,
} from "@3ngram/schema";
import { recordsFromBasicMemoryNote } from "./import-basic-memory.js";
import { lineError } from "./import-errors.js";
import { recordsFromMcpLine } from "./import-mcp-memory.js";
import { mem0Items, recordFromMem0 } from "./import-mem0.js";

/** Formats whose line stands for several archive records, all refused together when the line cannot be read. */
const TRANSLATORS: Partial<Record<ImportFormat, (value: unknown) => unknown[]>> = {
  "mcp-memory": recordsFromMcpLine,
  "basic-memory": recordsFromBasicMemoryNote,
};

/** A record ready to store, or the reason its line was refused before touching the database. */
export type Parsed = { line: number; record: Exclude<ArchiveRecord, { kind: "archive" }> } | { line: number; error: AppError };

/**
 * The stream's messages in order: the options first, then pieces of the file, joined and split
 * into lines as they arrive (a piece may end inside a line), then `end`. Request-level problems (a
 * message out of place, too big, too many records, an archive version we cannot read, a stream
 * without its end) refuse the import as a whole and stop reading; a bad line is only that line's
 * error. The end message is what proves the file whole: a client that cancels mid-file can reach
 * this loop as an ordinary end of stream, before its cancellation does.
 */
export async function readArchive(parts: AsyncIterable<ImportPart>): Promise<{ format: ImportFormat; parsed: Parsed[] }> {
  let reader: ArchiveReader | undefined;
  let ended = false;
  for await (const part of parts) {
    if (ended) {
      throw new AppError("invalid_input", "end: no message may follow the end message", { field: "end" });
    } else if (reader === undefined) {
      if (part.options === undefined) throw new AppError("invalid_input", "options: the first message must carry the import options", { field: "options" });
      reader = new ArchiveReader(part.options.format);
    } else if (part.options !== undefined) {
      throw new AppError("invalid_input", "options: only the first message may carry options", { field: "options" });
    } else if (part.end === true) {
      ended = true;
    } else if (part.ndjson === undefined) {
      throw new AppError("invalid_input", "ndjson: every message between the first and the end must carry a piece of the file", { field: "ndjson" });
    } else {
      reader.push(part.ndjson);
    }
  }
  if (reader === undefined) throw new AppError("invalid_input", "options: the stream ended before its first message", { field: "options" });
  if (!ended)
    throw new AppError("invalid_input", "end: the stream ended without its end message, so the file may be incomplete; nothing was stored", { field: "end" });
  return { format: reader.format, parsed: reader.end() };
}

/** Splits and validates the file as it arrives, before anything is stored. */
class ArchiveReader {
  private readonly parsed: Parsed[] = [];
  /** The start of a line whose end has not arrived yet. */
  private partial = "";
  private bytes = 0;
  private line = 0;

  constructor(readonly format: ImportFormat) {}

  push(piece: string): void {
    this.bytes += Buffer.byteLength(piece, "utf8");
    if (this.bytes > MAX_IMPORT_BODY_BYTES) {
      throw new AppError("invalid_input", `ndjson: larger than ${MAX_IMPORT_BODY_BYTES} bytes; split the file`, { field: "ndjson" });
    }
    // Only the new piece is searched for line ends, so a long line sent in many pieces costs no more than a short one.
    const lines = piece.split("\n");
    if (lines.length === 1) {
      this.partial += piece;
      return;
    }
    this.readLine(this.partial + lines[0]!);
    for (let i = 1; i < lines.length - 1; i += 1) this.readLine(lines[i]!);
    this.partial = lines[lines.length - 1]!;
  }

  end(): Parsed[] {
    this.readLine(this.partial);
    this.partial = "";
    return this.parsed;
  }

  private readLine(raw: string): void {
    this.line += 1;
    const line = this.line;
    const text = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (text.trim() === "") return;
    const parsed = this.parsed;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      parsed.push({ line, error: new AppError("invalid_input", "line: not valid JSON", { field: "line" }) });
      return;
    }
    const translate = TRANSLATORS[this.format];
    if (translate !== undefined) {
      let records: unknown[];
      try {
        records = translate(value);
      } catch (err) {
        parsed.push({ line, error: lineError(err) });
        return;
      }
      for (const record of records) parsed.push(validate(line, record));
    } else if (this.format === "mem0") {
      // Each memory of a get_all answer on one line stands or falls alone, like an entity's observations.
      for (const item of mem0Items(value)) {
        let record: unknown;
        try {
          record = recordFromMem0(item);
        } catch (err) {
          parsed.push({ line, error: lineError(err) });
          continue;
        }
        parsed.push(validate(line, record));
      }
    } else if (isHeader(value)) {
      // A header we cannot read means we cannot trust our reading of the lines after it.
      try {
        parseInput(archiveHeaderSchema, value);
      } catch (err) {
        const refused = lineError(err);
        throw new AppError("invalid_input", `line ${line}: ${refused.message}`, refused.details.field ? { field: refused.details.field } : {});
      }
    } else {
      parsed.push(validate(line, value));
    }
    if (parsed.length > MAX_IMPORT_RECORDS) {
      throw new AppError("invalid_input", `ndjson: more than ${MAX_IMPORT_RECORDS} records; split the file`, { field: "ndjson" });
    }
  }
}

function isHeader(value: unknown): boolean {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "archive";
}

function validate(line: number, value: unknown): Parsed {
  try {
    const record = parseInput(archiveRecordSchema, value);
    if (record.kind === "archive") return { line, error: new AppError("invalid_input", "kind: an archive header may not appear here", { field: "kind" }) };
    return { line, record };
  } catch (err) {
    return { line, error: lineError(err) };
  }
}
