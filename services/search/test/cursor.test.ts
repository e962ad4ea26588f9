import { describe, expect, it } from "vitest";
import { AppError } from "@3ngram/errors";
import { MAX_CURSOR_LENGTH, MAX_FROZEN_CURSOR_IDS } from "@3ngram/schema";
import { decodeCursor, encodeCursor, type FrozenCursor } from "../src/domain/cursor.js";
import { cursorFingerprint } from "../src/domain/search.js";

const uuid = (i: number) => `0190c0de-0000-7000-8000-${i.toString(16).padStart(12, "0")}`;

const frozen = (count: number): FrozenCursor => ({
  kind: "frozen",
  fingerprint: "0123456789abcdef",
  offset: Math.min(5, count),
  ids: Array.from({ length: count }, (_, i) => uuid(i)),
  scores: Array.from({ length: count }, (_, i) => 1 - i / 1000 - 2 * (i % 2)),
  snapshot: {
    legs: [
      { leg: "vector", available: false, candidates: 0 },
      { leg: "fts", available: true, candidates: 12 },
      { leg: "recency", available: true, candidates: 50 },
    ],
    abstained: false,
    evidence: { bestCosine: null, anyLexical: true, scoreGap: 0.125, termCoverage: 0.5 },
  },
});

/** One search's parts a cursor is bound to, spelt as cursorFingerprint takes them. */
interface Bound {
  tenantId: string;
  order: "relevance" | "chronological";
  scope?: string;
  asOf?: { validAt?: string; asKnownAt?: string };
  query: string | null;
  filters: Parameters<typeof cursorFingerprint>[2]["filters"];
  appliedScope: string | null;
}

const bound: Bound = {
  tenantId: "t",
  order: "relevance",
  query: "q",
  filters: { memoryTypes: ["note", "fact"], scope: null, projects: ["b", "a"], status: "active", recordedAfter: null, recordedBefore: null },
  appliedScope: null,
};

const fingerprint = ({ tenantId, query, filters, appliedScope, ...input }: Bound) => cursorFingerprint(tenantId, input, { query, filters, appliedScope });

const invalid = (text: string) => {
  let err: unknown;
  try {
    decodeCursor(text);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).reason).toBe("invalid_input");
  expect((err as AppError).details.field).toBe("cursor");
};

describe("search cursors", () => {
  it("round-trips a frozen pool with its coverage snapshot", () => {
    const cursor = frozen(60);
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
  });

  it("round-trips a keyset position with microseconds", () => {
    const cursor = { kind: "keyset" as const, fingerprint: "fedcba9876543210", after: { recordedKey: "2026-01-31T09:00:00.123456Z", id: uuid(7) } };
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
  });

  it("keeps the issued layout, so cursors issued before an upgrade still decode", () => {
    // Encoded by the previous encoder (a buffer per id): the layout in cursor.ts, byte for byte.
    const issued = {
      frozen:
        "AWYBI0VniavN7wACAAMBADIBAAMA__8DP-gAAAAAAAB_-AAAAAAAAD_gAAAAAAAAAZDA3gAAcACAAAAAAAAAAQGQwN4AAHAAgAAAAAAAAAoBkMDeAABwAIAAAAAAAAD_P_QAAAAAAAC_4AAAAAAAAD6wxvegte2N",
      keyset: "AWv-3LqYdlQyEBsyMDI2LTAxLTMxVDA5OjAwOjAwLjEyMzQ1NloBkMDeAABwAIAAAAAAAAAH",
    };
    const frozenCursor: FrozenCursor = {
      kind: "frozen",
      fingerprint: "0123456789abcdef",
      offset: 2,
      // Upper-case hex is accepted and written as the same bytes.
      ids: [uuid(1), uuid(10).toUpperCase(), uuid(255)],
      scores: [1.25, -0.5, 0.000001],
      snapshot: {
        legs: [
          { leg: "vector", available: true, candidates: 50 },
          { leg: "fts", available: true, candidates: 3 },
          // Counts above the u16 field are written as its maximum.
          { leg: "recency", available: false, candidates: 70_000 },
        ],
        abstained: true,
        evidence: { bestCosine: 0.75, anyLexical: true, scoreGap: null, termCoverage: 0.5 },
      },
    };
    const keysetCursor = { kind: "keyset" as const, fingerprint: "fedcba9876543210", after: { recordedKey: "2026-01-31T09:00:00.123456Z", id: uuid(7) } };
    expect(encodeCursor(frozenCursor)).toBe(issued.frozen);
    expect(encodeCursor(keysetCursor)).toBe(issued.keyset);
    expect(decodeCursor(issued.frozen)).toMatchObject({ ids: [uuid(1), uuid(10), uuid(255)], offset: 2, scores: [1.25, -0.5, 0.000001] });
    expect(decodeCursor(issued.keyset)).toEqual(keysetCursor);
  });

  it("refuses to encode an id that is not a UUID", () => {
    for (const id of ["not-a-uuid", uuid(1).slice(0, -1), `${uuid(1)}0`, uuid(1).replace("0", "g")]) {
      expect(() => encodeCursor({ ...frozen(1), ids: [id] })).toThrow("not a uuid");
    }
  });

  it("stays under the input bound at the frozen-pool ceiling", () => {
    expect(encodeCursor(frozen(MAX_FROZEN_CURSOR_IDS)).length).toBeLessThanOrEqual(MAX_CURSOR_LENGTH);
    expect(() => encodeCursor(frozen(MAX_FROZEN_CURSOR_IDS + 1))).toThrow();
  });

  it("refuses garbled, truncated and padded cursors", () => {
    const good = encodeCursor(frozen(10));
    invalid(good.slice(0, -4));
    invalid(`${good}AAAA`);
    invalid(`${good}=`);
    invalid("not a cursor!");
    invalid(Buffer.from('{"v":2,"ids":[]}').toString("base64url"));
    const bytes = Buffer.from(good, "base64url");
    bytes[0] = 9; // unknown version
    invalid(bytes.toString("base64url"));
  });

  it("fingerprints the canonical filters: order of sets does not matter, every value does", () => {
    const fp = fingerprint(bound);
    expect(fp).toMatch(/^[0-9a-f]{16}$/);
    expect(fingerprint({ ...bound, filters: { ...bound.filters, memoryTypes: ["fact", "note"], projects: ["a", "b"] } })).toBe(fp);
    expect(fingerprint({ ...bound, query: "q2" })).not.toBe(fp);
    expect(fingerprint({ ...bound, tenantId: "u" })).not.toBe(fp);
    expect(fingerprint({ ...bound, appliedScope: "work" })).not.toBe(fp);
    expect(fingerprint({ ...bound, order: "chronological" })).not.toBe(fp);
    expect(fingerprint({ ...bound, asOf: { validAt: "1970-01-01T00:00:00.000Z" } })).not.toBe(fp);
  });
});
