import { afterAll, describe, expect, it } from "vitest";

import { EmbeddingsError } from "../src/errors.js";
import { LocalModelEmbedder } from "../src/local-model.js";
import { LocalModelPool } from "../src/local-model-pool.js";

// The pool's workers load the compiled worker entry (dist/), so the package must be built first.
const texts = [
  "The team decided to use PostgreSQL for storage",
  "We picked Postgres as our database",
  "My cat likes to sleep in the sun",
  "",
  "storage ".repeat(3000),
  ...Array.from({ length: 19 }, (_, i) => `note number ${i} about topic ${i % 3}`),
];

function maxAbsDifference(a: readonly number[], b: readonly number[]): number {
  return a.reduce((worst, value, i) => Math.max(worst, Math.abs(value - b[i]!)), 0);
}

describe("LocalModelPool", () => {
  const inThread = new LocalModelEmbedder();
  const pool = new LocalModelPool({ workers: 2 });
  afterAll(() => pool.close());

  it("returns the vectors the in-thread model returns for the same texts", { timeout: 120_000 }, async () => {
    await pool.warmup();
    const expected = await inThread.embed(texts);
    const actual = await pool.embed(texts);
    expect(actual).toHaveLength(texts.length);
    actual.forEach((vector, i) => {
      expect(vector).toHaveLength(inThread.dimensions);
      expect(maxAbsDifference(vector, expected[i]!)).toBeLessThan(1e-5);
    });
  });

  it("batches concurrent calls together and gives each caller its own vectors in order", { timeout: 60_000 }, async () => {
    const expected = await inThread.embed(texts);
    // One call per text, all at once: they share batches on the workers.
    const results = await Promise.all(texts.map((text) => pool.embed([text])));
    results.forEach(([vector], i) => expect(maxAbsDifference(vector!, expected[i]!)).toBeLessThan(1e-5));
  });

  it("replaces a crashed worker, failing only the calls it held, with a retryable error", { timeout: 120_000 }, async () => {
    // Enough texts that both workers are busy when one of them is ended.
    const calls = Array.from({ length: 6 }, (_, i) => pool.embed(texts.map((text) => `${text} ${i}`)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(pool.busyWorkers).toBeGreaterThan(0);
    await pool.terminateWorker(0);
    const outcomes = await Promise.allSettled(calls);
    const failed = outcomes.filter((outcome) => outcome.status === "rejected");
    const succeeded = outcomes.filter((outcome) => outcome.status === "fulfilled");
    expect(failed.length).toBeGreaterThan(0);
    expect(succeeded.length).toBeGreaterThan(0);
    for (const outcome of failed) {
      const reason = (outcome as PromiseRejectedResult).reason;
      expect(reason).toBeInstanceOf(EmbeddingsError);
      expect((reason as EmbeddingsError).retryable).toBe(true);
    }
    for (const outcome of succeeded) expect((outcome as PromiseFulfilledResult<number[][]>).value).toHaveLength(texts.length);

    // The pool is whole again: a retried call succeeds and matches the in-thread model.
    const [expected] = await inThread.embed([texts[0]!]);
    const [again] = await pool.embed([texts[0]!]);
    expect(maxAbsDifference(again!, expected!)).toBeLessThan(1e-5);
    expect(pool.size).toBe(2);
  });

  it("drops an aborted call from the queue", async () => {
    const controller = new AbortController();
    const call = pool.embed(texts, { signal: controller.signal });
    controller.abort(new Error("caller gave up"));
    await expect(call).rejects.toThrow("caller gave up");
    expect(await pool.embed(["still serving"])).toHaveLength(1);
  });

  it("closes while a batch is in flight without ending the process, failing that batch's calls", { timeout: 60_000 }, async () => {
    const closing = new LocalModelPool({ workers: 1 });
    await closing.warmup();
    const outcome = closing.embed(texts).then(
      () => "resolved",
      (err: unknown) => err,
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closing.busyWorkers).toBe(1);
    await closing.close();
    expect(await outcome).toBeInstanceOf(EmbeddingsError);
    // Still here: a worker stopped inside the runtime's native call would have aborted the process.
    expect(await inThread.embed(["after close"])).toHaveLength(1);
  });

  it("refuses calls once closed", async () => {
    const closing = new LocalModelPool({ workers: 1 });
    await closing.close();
    await expect(closing.embed(["x"])).rejects.toBeInstanceOf(EmbeddingsError);
  });

  it("rejects a worker count out of range", () => {
    expect(() => new LocalModelPool({ workers: 0 })).toThrow(RangeError);
    expect(() => new LocalModelPool({ workers: 17 })).toThrow(RangeError);
  });
});
