/**
 * The regular files of a tar archive (optionally gzip-compressed), as the operator CLI's import
 * reads a packed basic-memory folder. Enough of the format for what tar, GNU tar and bsdtar
 * write: ustar headers (with the name prefix), GNU long names (`L`) and pax path records (`x`).
 * Links, devices and directories are passed over; only file contents matter to an import.
 */
import { gunzipSync } from "node:zlib";

export interface TarFile {
  path: string;
  content: Buffer;
}

const BLOCK = 512;

/** Refuses to unpack more than this: a folder of notes is far smaller, a compression bomb is not. */
const MAX_TAR_BYTES = 1024 * 1024 * 1024;

export function readTar(packed: Buffer): TarFile[] {
  const isGzip = packed[0] === 0x1f && packed[1] === 0x8b;
  const tar = isGzip ? gunzip(packed) : packed;
  const files: TarFile[] = [];
  let longName: string | undefined;
  let paxPath: string | undefined;
  for (let offset = 0; offset + BLOCK <= tar.length;) {
    const header = tar.subarray(offset, offset + BLOCK);
    // Two zero blocks end the archive; one is enough to know nothing follows.
    if (header.every((byte) => byte === 0)) break;
    if (!checksumMatches(header)) throw new Error(`not a tar archive (bad header checksum at byte ${offset})`);
    const size = octal(header.subarray(124, 136));
    const type = String.fromCharCode(header[156]!);
    const start = offset + BLOCK;
    if (start + size > tar.length) throw new Error("the tar archive is cut short");
    const body = tar.subarray(start, start + size);
    offset = start + Math.ceil(size / BLOCK) * BLOCK;
    if (type === "L") {
      longName = text(body);
      continue;
    }
    if (type === "x") {
      paxPath = paxRecord(body, "path") ?? paxPath;
      continue;
    }
    const prefix = text(header.subarray(345, 500));
    const name = paxPath ?? longName ?? (prefix === "" ? text(header.subarray(0, 100)) : `${prefix}/${text(header.subarray(0, 100))}`);
    longName = undefined;
    paxPath = undefined;
    if (type === "0" || type === "\0") files.push({ path: name, content: Buffer.from(body) });
  }
  return files;
}

function gunzip(packed: Buffer): Buffer {
  try {
    return gunzipSync(packed, { maxOutputLength: MAX_TAR_BYTES });
  } catch (err) {
    if ((err as { code?: unknown }).code === "ERR_BUFFER_TOO_LARGE")
      throw new Error(`the tar archive unpacks to more than ${MAX_TAR_BYTES} bytes`, { cause: err });
    throw new Error(`the gzip stream cannot be read: ${(err as Error).message}`, { cause: err });
  }
}

/** The header's checksum: the sum of its bytes with the checksum field read as spaces. */
function checksumMatches(header: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i += 1) sum += i >= 148 && i < 156 ? 0x20 : header[i]!;
  return sum === octal(header.subarray(148, 156));
}

function octal(field: Buffer): number {
  const digits = text(field).trim();
  return digits === "" ? 0 : parseInt(digits, 8);
}

/** A NUL-terminated field as UTF-8. */
function text(field: Buffer): string {
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? field.length : end).toString("utf8");
}

/** One key of a pax extended header: lines of `<length> <key>=<value>\n`. */
function paxRecord(body: Buffer, key: string): string | undefined {
  let value: string | undefined;
  for (let offset = 0; offset < body.length;) {
    const space = body.indexOf(0x20, offset);
    if (space === -1) break;
    const length = parseInt(body.subarray(offset, space).toString("ascii"), 10);
    if (!(length > 0)) break;
    const record = body.subarray(space + 1, offset + length - 1).toString("utf8");
    const equals = record.indexOf("=");
    if (record.slice(0, equals) === key) value = record.slice(equals + 1);
    offset += length;
  }
  return value;
}
