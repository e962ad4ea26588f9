import { describe, expect, it } from "vitest";

import { cosineSimilarity } from "../src/cosine.js";
import { HashingEmbedder } from "../src/hashing.js";

function norm(vector: number[]): number {
  return Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
}

describe("HashingEmbedder", () => {
  it("defaults to 512 dimensions and a matching model id", () => {
    const embedder = new HashingEmbedder();
    expect(embedder.dimensions).toBe(512);
    expect(embedder.model).toBe("hashing-512");
    expect(new HashingEmbedder({ dimensions: 64 }).model).toBe("hashing-64");
  });

  it("is deterministic across calls and instances", async () => {
    const texts = ["Deploys happen on Tuesdays", "The API key rotates monthly"];
    const first = await new HashingEmbedder().embed(texts);
    const second = await new HashingEmbedder().embed(texts);
    expect(second).toEqual(first);
    expect(new HashingEmbedder().embedOne(texts[0]!)).toEqual(first[0]);
  });

  it("returns one unit-length vector of the configured size per text", async () => {
    const embedder = new HashingEmbedder({ dimensions: 96 });
    const vectors = await embedder.embed(["alpha", "beta gamma", "a much longer sentence about databases"]);
    expect(vectors).toHaveLength(3);
    for (const vector of vectors) {
      expect(vector).toHaveLength(96);
      expect(norm(vector)).toBeCloseTo(1, 10);
    }
  });

  it("gives different texts different vectors, and closer vectors to overlapping texts", async () => {
    const [base, overlapping, unrelated] = await new HashingEmbedder().embed([
      "use postgres for the memory store",
      "use postgres for the vector store",
      "my cat sleeps in the sun",
    ]);
    expect(base).not.toEqual(overlapping);
    expect(base).not.toEqual(unrelated);
    expect(cosineSimilarity(base!, overlapping!)).toBeGreaterThan(cosineSimilarity(base!, unrelated!));
    expect(cosineSimilarity(base!, overlapping!)).toBeGreaterThan(0.5);
  });

  it("ignores case and punctuation between words", () => {
    const embedder = new HashingEmbedder();
    expect(embedder.embedOne("Hello, World!")).toEqual(embedder.embedOne("hello world"));
  });

  it("maps text without tokens to one fixed unit vector", () => {
    const embedder = new HashingEmbedder({ dimensions: 32 });
    const empty = embedder.embedOne("");
    expect(norm(empty)).toBe(1);
    expect(embedder.embedOne("   ")).toEqual(empty);
    expect(embedder.embedOne("?!")).toEqual(empty);
    expect(embedder.embedOne("x")).not.toEqual(empty);
  });

  it("rejects invalid dimensions and aborted signals", async () => {
    expect(() => new HashingEmbedder({ dimensions: 0 })).toThrow(RangeError);
    expect(() => new HashingEmbedder({ dimensions: 1.5 })).toThrow(RangeError);
    expect(() => new HashingEmbedder({ dimensions: 16001 })).toThrow(RangeError);
    const controller = new AbortController();
    controller.abort();
    await expect(new HashingEmbedder().embed(["x"], { signal: controller.signal })).rejects.toThrow();
  });
});
