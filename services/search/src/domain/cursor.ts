import { AppError } from "@3ngram/errors";
import { MAX_FROZEN_CURSOR_IDS, type Coverage, type SearchLeg } from "@3ngram/schema";
import { RECORDED_KEY_PATTERN, type Keyset } from "../db/pages.js";

/**
 * Opaque continuation tokens. Both kinds start with a version byte, a kind byte and the 8-byte
 * fingerprint of the search that issued them (cursorFingerprint, domain/search.ts), so a cursor is
 * only ever honoured for that search.
 *
 * - frozen (relevance order): page 1 ranked the whole pool; the cursor carries the ranked ids and
 *   their scores plus page 1's coverage snapshot, and the position reached. Continuations re-read
 *   those ids by position, never re-rank and never embed.
 * - keyset (chronological order): the exact recorded time and id of the last row returned.
 *
 * Layout (big-endian) — frozen: [1][f][fp×8][offset u16][count u16][3 × (available u8,
 * candidates u16)][flags u8][bestCosine f64][scoreGap f64][termCoverage f64][ids count×16]
 * [scores count×8] (NaN encodes a null number);
 * keyset: [1][k][fp×8][key length u8][key ASCII][id×16]. Encoded as base64url.
 */

const VERSION = 1;
const FROZEN = 0x66; // "f"
const KEYSET = 0x6b; // "k"
/** The fingerprint's length in bytes (16 hex digits). */
export const FP_BYTES = 8;
const HEADER = 2 + FP_BYTES;
const LEG_ORDER: readonly SearchLeg[] = ["vector", "fts", "recency"];
const FROZEN_FIXED = HEADER + 4 + LEG_ORDER.length * 3 + 1 + 24;
const PER_ID = 16 + 8;

/** What a first page's coverage said about the pool, carried by its cursor to every later page. */
export type PageSnapshot = Pick<Coverage, "legs" | "abstained" | "evidence">;

export interface FrozenCursor {
  kind: "frozen";
  fingerprint: string;
  /** Index in ids of the next row to consider. */
  offset: number;
  ids: string[];
  scores: number[];
  snapshot: PageSnapshot;
}

export interface KeysetCursor {
  kind: "keyset";
  fingerprint: string;
  after: Keyset;
}

export type Cursor = FrozenCursor | KeysetCursor;

export function encodeCursor(cursor: Cursor): string {
  if (cursor.kind === "keyset") {
    const key = Buffer.from(cursor.after.recordedKey, "ascii");
    const buf = Buffer.alloc(HEADER + 1 + key.length + 16);
    let at = writeHeader(buf, KEYSET, cursor.fingerprint);
    at = buf.writeUInt8(key.length, at);
    at += key.copy(buf, at);
    writeUuid(buf, at, cursor.after.id);
    return buf.toString("base64url");
  }
  const count = cursor.ids.length;
  if (count > MAX_FROZEN_CURSOR_IDS || cursor.scores.length !== count) throw new Error("frozen pool out of bounds");
  // One buffer for the whole cursor, ids written in place: a page-1 cursor holds the whole ranked
  // pool, and a buffer per id cost more than the rest of the encoding.
  const buf = Buffer.alloc(FROZEN_FIXED + count * PER_ID);
  let at = writeHeader(buf, FROZEN, cursor.fingerprint);
  at = buf.writeUInt16BE(cursor.offset, at);
  at = buf.writeUInt16BE(count, at);
  for (const leg of LEG_ORDER) {
    const l = cursor.snapshot.legs.find((x) => x.leg === leg);
    at = buf.writeUInt8(l?.available ? 1 : 0, at);
    at = buf.writeUInt16BE(Math.min(0xffff, l?.candidates ?? 0), at);
  }
  at = buf.writeUInt8((cursor.snapshot.abstained ? 1 : 0) | (cursor.snapshot.evidence.anyLexical ? 2 : 0), at);
  at = buf.writeDoubleBE(cursor.snapshot.evidence.bestCosine ?? Number.NaN, at);
  at = buf.writeDoubleBE(cursor.snapshot.evidence.scoreGap ?? Number.NaN, at);
  at = buf.writeDoubleBE(cursor.snapshot.evidence.termCoverage ?? Number.NaN, at);
  for (const id of cursor.ids) at = writeUuid(buf, at, id);
  for (const score of cursor.scores) at = buf.writeDoubleBE(score, at);
  return buf.toString("base64url");
}

function writeHeader(buf: Buffer, kind: number, fp: string): number {
  buf[0] = VERSION;
  buf[1] = kind;
  if (buf.write(fp, 2, FP_BYTES, "hex") !== FP_BYTES) throw new Error("not a fingerprint");
  return HEADER;
}

/** Decodes a cursor this server issued; anything else (garbled, truncated, another version) is invalid_input. */
export function decodeCursor(text: string): Cursor {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) throw garbled();
  const buf = Buffer.from(text, "base64url");
  // base64url decoding is lenient; only the canonical encoding of what we issued is accepted.
  if (buf.toString("base64url") !== text || buf.length < HEADER || buf[0] !== VERSION) throw garbled();
  const fp = buf.subarray(2, HEADER).toString("hex");
  if (buf[1] === KEYSET) {
    const length = buf[HEADER]!;
    if (buf.length !== HEADER + 1 + length + 16) throw garbled();
    const recordedKey = buf.subarray(HEADER + 1, HEADER + 1 + length).toString("ascii");
    if (!RECORDED_KEY_PATTERN.test(recordedKey) || Number.isNaN(Date.parse(recordedKey))) throw garbled();
    return { kind: "keyset", fingerprint: fp, after: { recordedKey, id: uuidText(buf.subarray(HEADER + 1 + length)) } };
  }
  if (buf[1] !== FROZEN || buf.length < FROZEN_FIXED) throw garbled();
  let at = HEADER;
  const offset = buf.readUInt16BE(at);
  const count = buf.readUInt16BE(at + 2);
  at += 4;
  if (count > MAX_FROZEN_CURSOR_IDS || offset > count || buf.length !== FROZEN_FIXED + count * PER_ID) throw garbled();
  const legs: PageSnapshot["legs"] = [];
  for (const leg of LEG_ORDER) {
    const available = buf.readUInt8(at);
    if (available > 1) throw garbled();
    legs.push({ leg, available: available === 1, candidates: buf.readUInt16BE(at + 1) });
    at += 3;
  }
  const flags = buf.readUInt8(at);
  if (flags > 3) throw garbled();
  const bestCosine = buf.readDoubleBE(at + 1);
  const scoreGap = buf.readDoubleBE(at + 9);
  const termCoverage = buf.readDoubleBE(at + 17);
  at += 25;
  const ids: string[] = [];
  for (let i = 0; i < count; i++, at += 16) ids.push(uuidText(buf.subarray(at, at + 16)));
  if (new Set(ids).size !== ids.length) throw garbled();
  const scores: number[] = [];
  for (let i = 0; i < count; i++, at += 8) {
    const score = buf.readDoubleBE(at);
    if (!Number.isFinite(score)) throw garbled();
    scores.push(score);
  }
  return {
    kind: "frozen",
    fingerprint: fp,
    offset,
    ids,
    scores,
    snapshot: {
      legs,
      abstained: (flags & 1) === 1,
      evidence: {
        bestCosine: finiteOrNull(bestCosine),
        anyLexical: (flags & 2) === 2,
        scoreGap: finiteOrNull(scoreGap),
        termCoverage: finiteOrNull(termCoverage),
      },
    },
  };
}

function garbled(): AppError {
  return new AppError("invalid_input", "cursor: not a cursor this server issued (garbled or truncated) — omit the cursor to start the search again", {
    field: "cursor",
  });
}

export function foreignCursor(): AppError {
  return new AppError(
    "invalid_input",
    "cursor: cursor was issued for a different query — omit the cursor to start this search, or repeat the original query, order and filters to continue it",
    { field: "cursor" },
  );
}

function finiteOrNull(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}

/** Writes a UUID's 16 bytes at `at` (hex digits in either case, dashes anywhere); answers the next offset. */
function writeUuid(buf: Buffer, at: number, id: string): number {
  const hex = id.replace(/-/g, "");
  // Buffer.write stops at the first pair that is not hex, so a short count is a bad id.
  if (hex.length !== 32 || buf.write(hex, at, 16, "hex") !== 16) throw new Error("not a uuid");
  return at + 16;
}

function uuidText(bytes: Buffer): string {
  const h = bytes.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
