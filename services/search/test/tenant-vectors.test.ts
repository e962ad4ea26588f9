/**
 * The in-process vector matrix with the real native scan: it answers what a brute-force cosine
 * ranking of the float vectors answers, up to the int8 rounding (a near tie may swap), through
 * additions, replacements and removals (which move the last row into the hole), and it never
 * answers an id it no longer holds.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { loadExactScan } from "../src/in-process/exact-scan.js";
import { quantize, TenantVectors, type NearestScan } from "../src/in-process/tenant-vectors.js";

const DIMENSIONS = 32;
/** How far int8 rounding may move a cosine distance here (about a thousandth; a margin above it). */
const ROUNDING = 5e-3;
let scan: NearestScan;

beforeAll(async () => {
  scan = await loadExactScan();
});

/** A deterministic pseudo-random vector (mulberry32), so a failure reproduces. */
function vectorFrom(seed: number): Float32Array {
  let a = seed >>> 0;
  const out = new Float32Array(DIMENSIONS);
  for (let i = 0; i < DIMENSIONS; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  }
  return out;
}

function cosineDistance(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return 1 - dot / Math.sqrt(na * nb);
}

/** The k nearest by brute force over what the test believes is held. */
function bruteForce(held: Map<string, Float32Array>, query: Float32Array, k: number): { ids: string[]; distances: number[] } {
  const ranked = [...held].map(([id, v]) => ({ id, d: cosineDistance(v, query) })).sort((x, y) => x.d - y.d);
  return { ids: ranked.slice(0, k).map((r) => r.id), distances: ranked.map((r) => r.d) };
}

describe("TenantVectors", () => {
  it("ranks like a brute-force cosine scan through additions, replacements and removals", () => {
    const vectors = new TenantVectors(DIMENSIONS, "1:1:", 4);
    const held = new Map<string, Float32Array>();
    for (let i = 0; i < 300; i++) {
      const v = vectorFrom(i + 1);
      vectors.set(`m${i}`, v);
      held.set(`m${i}`, v);
    }
    // Replace every seventh vector (a re-embedding) and remove every fifth (erasure), including the last rows.
    for (let i = 0; i < 300; i += 7) {
      const v = vectorFrom(10_000 + i);
      vectors.set(`m${i}`, v);
      held.set(`m${i}`, v);
    }
    for (let i = 0; i < 300; i += 5) {
      vectors.delete(`m${i}`);
      held.delete(`m${i}`);
    }
    vectors.delete("m299");
    held.delete("m299");
    vectors.delete("never-held");
    expect(vectors.size).toBe(held.size);

    for (let q = 0; q < 20; q++) {
      const query = vectorFrom(50_000 + q);
      const answer = vectors.nearest(query, 25, scan);
      const expected = bruteForce(held, query, 25);
      expect(answer).toHaveLength(25);
      // Every answered id is held, and its distance is within int8 rounding of the true k-th
      // nearest; nearly all of the true 25 are answered, and the first is the nearest or a near tie.
      const kth = expected.distances[24]!;
      for (const id of answer) {
        expect(held.has(id)).toBe(true);
        expect(cosineDistance(held.get(id)!, query)).toBeLessThanOrEqual(kth + ROUNDING);
      }
      expect(expected.ids.filter((id) => answer.includes(id)).length).toBeGreaterThanOrEqual(22);
      expect(cosineDistance(held.get(answer[0]!)!, query)).toBeLessThanOrEqual(expected.distances[0]! + ROUNDING);
    }
  });

  it("answers every held id when asked for more than it holds, and nothing when empty", () => {
    const vectors = new TenantVectors(DIMENSIONS, "1:1:");
    expect(vectors.nearest(vectorFrom(1), 10, scan)).toEqual([]);
    vectors.set("a", vectorFrom(1));
    vectors.set("b", vectorFrom(2));
    expect(vectors.nearest(vectorFrom(1), 10, scan)).toEqual(["a", "b"]);
    expect(vectors.has("a")).toBe(true);
  });

  it("refuses a vector of another length", () => {
    const vectors = new TenantVectors(DIMENSIONS, "1:1:");
    expect(() => vectors.set("a", new Float32Array(DIMENSIONS + 1))).toThrow(RangeError);
  });
});

describe("quantize", () => {
  it("scales each vector by its own largest magnitude to the int8 range, and a zero vector to zeros", () => {
    expect(Array.from(quantize(new Float32Array([0.5, -0.2, 0.1, 0])))).toEqual([127, -51, 25, 0]);
    expect(Array.from(quantize(new Float32Array([-2, 0.9])))).toEqual([-127, 57]);
    expect(Array.from(quantize(new Float32Array([0, 0])))).toEqual([0, 0]);
  });
});
