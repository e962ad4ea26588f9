import http from "node:http";
import https from "node:https";
import net from "node:net";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { bundledModel, DEFAULT_BUNDLED_MODEL } from "../src/bundled-models.js";
import { cosineSimilarity } from "../src/cosine.js";
import { LocalModelEmbedder } from "../src/local-model.js";

const DEFAULT_MODEL = bundledModel(DEFAULT_BUNDLED_MODEL);

function norm(vector: number[]): number {
  return Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
}

// Any attempt to reach the network while the model loads or runs is recorded and refused.
const networkAttempts: string[] = [];
const originals = {
  fetch: globalThis.fetch,
  httpRequest: http.request,
  httpsRequest: https.request,
  connect: net.Socket.prototype.connect,
};

beforeAll(() => {
  globalThis.fetch = (async (input: unknown) => {
    networkAttempts.push(`fetch ${String(input)}`);
    throw new Error("network disabled in this test");
  }) as typeof fetch;
  const refuse = (kind: string) =>
    ((...args: unknown[]) => {
      networkAttempts.push(`${kind} ${JSON.stringify(args[0])}`);
      throw new Error("network disabled in this test");
    }) as never;
  http.request = refuse("http.request");
  https.request = refuse("https.request");
  net.Socket.prototype.connect = refuse("net.connect");
});

afterAll(() => {
  globalThis.fetch = originals.fetch;
  http.request = originals.httpRequest;
  https.request = originals.httpsRequest;
  net.Socket.prototype.connect = originals.connect;
});

describe(`LocalModelEmbedder (the default model, ${DEFAULT_MODEL.name})`, () => {
  const embedder = new LocalModelEmbedder();

  it("loads the model from the cache without touching the network or the process's error handlers", { timeout: 60_000 }, async () => {
    // A runtime's prelude may register rethrowing process-wide handlers (TensorFlow.js's
    // WebAssembly one did, until issue 28 removed it); loading must leave the process with
    // exactly the listeners it had.
    const listeners = () => [process.listeners("uncaughtException"), process.listeners("unhandledRejection")];
    const before = listeners();
    await embedder.warmup();
    const [vector] = await embedder.embed(["hello world"]);
    expect(vector).toHaveLength(DEFAULT_MODEL.dimensions);
    expect(networkAttempts).toEqual([]);
    expect(listeners()).toEqual(before);
  });

  it("reports its model id and size", () => {
    expect(embedder.model).toBe(DEFAULT_MODEL.id);
    expect(embedder.dimensions).toBe(DEFAULT_MODEL.dimensions);
  });

  it("returns unit vectors of the model's size, one per text", async () => {
    const vectors = await embedder.embed(["first memory", "second memory", "third"]);
    expect(vectors).toHaveLength(3);
    for (const vector of vectors) {
      expect(vector).toHaveLength(DEFAULT_MODEL.dimensions);
      expect(vector.every(Number.isFinite)).toBe(true);
      expect(norm(vector)).toBeCloseTo(1, 5);
    }
  });

  it("scores a related pair above an unrelated pair", async () => {
    const [postgres, database, cat] = await embedder.embed([
      "The team decided to use PostgreSQL for storage",
      "We picked Postgres as our database",
      "My cat likes to sleep in the sun",
    ]);
    const related = cosineSimilarity(postgres!, database!);
    const unrelated = cosineSimilarity(postgres!, cat!);
    expect(related).toBeGreaterThan(unrelated + 0.1);
  });

  it("handles empty, whitespace-only and very long texts", async () => {
    const [empty, blank, space, long] = await embedder.embed(["", " \n\t ", " ", "storage ".repeat(5000)]);
    for (const vector of [empty, blank, space, long]) {
      expect(vector).toHaveLength(DEFAULT_MODEL.dimensions);
      expect(norm(vector!)).toBeCloseTo(1, 5);
    }
    expect(empty).toEqual(space);
    expect(blank).toEqual(space);
  });

  it("returns [] for no input", async () => {
    expect(await embedder.embed([])).toEqual([]);
  });

  it("keeps input order across batches of 16", { timeout: 60_000 }, async () => {
    const texts = Array.from({ length: 20 }, (_, i) => `note number ${i} about topic ${i % 3}`);
    const batched = await embedder.embed(texts);
    expect(batched).toHaveLength(20);
    for (const index of [0, 15, 16, 19]) {
      const [alone] = await embedder.embed([texts[index]!]);
      expect(cosineSimilarity(batched[index]!, alone!)).toBeGreaterThan(0.9999);
    }
    expect(cosineSimilarity(batched[16]!, batched[17]!)).toBeLessThan(0.9999);
  });

  it("serves concurrent callers correctly", async () => {
    const [a, b] = await Promise.all([embedder.embed(["concurrent alpha"]), embedder.embed(["concurrent beta"])]);
    const [aAlone] = await embedder.embed(["concurrent alpha"]);
    expect(cosineSimilarity(a[0]!, aAlone!)).toBeGreaterThan(0.9999);
    expect(cosineSimilarity(a[0]!, b[0]!)).toBeLessThan(0.9999);
  });

  it("rejects when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(embedder.embed(["x"], { signal: controller.signal })).rejects.toThrow();
  });

  it("made no network attempt at any point", () => {
    expect(networkAttempts).toEqual([]);
  });
});
