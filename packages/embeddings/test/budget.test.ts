import { describe, expect, it } from "vitest";
import { HashingEmbedder, embedWithinBudget, type Embedder } from "../src/index.js";

/** A model that answers only when told to, and honours the abort signal like the real ones. */
function slowEmbedder(dimensions: number, vector: () => number[] = () => Array(dimensions).fill(1 / Math.sqrt(dimensions))): Embedder & { aborted: boolean } {
  const state = { aborted: false };
  return Object.assign(state, {
    model: "slow",
    dimensions,
    embed(texts: readonly string[], options: { signal?: AbortSignal } = {}) {
      return new Promise<number[][]>((resolve, reject) => {
        const timer = setTimeout(() => resolve(texts.map(vector)), 60_000);
        options.signal?.addEventListener("abort", () => {
          state.aborted = true;
          clearTimeout(timer);
          reject(new Error("aborted"));
        });
      });
    },
  });
}

describe("embedWithinBudget", () => {
  it("answers the model's vector when it comes in time", async () => {
    const embedder = new HashingEmbedder({ dimensions: 64 });
    const outcome = await embedWithinBudget(embedder, "squat 100 kg", 5_000);
    expect(outcome.vector).toEqual((await embedder.embed(["squat 100 kg"]))[0]);
  });

  it("is disabled without a model or without a budget", async () => {
    expect(await embedWithinBudget(null, "x", 1_000)).toEqual({ vector: null, failure: "disabled" });
    expect(await embedWithinBudget(new HashingEmbedder({ dimensions: 8 }), "x", 0)).toEqual({ vector: null, failure: "disabled" });
  });

  it("gives up at the budget and aborts the model's call", async () => {
    const embedder = slowEmbedder(8);
    expect(await embedWithinBudget(embedder, "x", 20)).toEqual({ vector: null, failure: "timeout" });
    expect(embedder.aborted).toBe(true);
  });

  it("counts a vector of the wrong length, or a thrown error, as a failure instead of throwing", async () => {
    const wrong: Embedder = { model: "wrong", dimensions: 8, embed: async (texts) => texts.map(() => [1, 0, 0]) };
    expect(await embedWithinBudget(wrong, "x", 1_000)).toEqual({ vector: null, failure: "error" });
    const failing: Embedder = { model: "failing", dimensions: 8, embed: async () => Promise.reject(new Error("provider down")) };
    expect(await embedWithinBudget(failing, "x", 1_000)).toMatchObject({ vector: null, failure: "error", error: new Error("provider down") });
  });
});
