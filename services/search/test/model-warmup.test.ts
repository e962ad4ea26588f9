import { describe, expect, it } from "vitest";
import { HashingEmbedder } from "@3ngram/embeddings";
import { createLogger } from "@3ngram/runtime";
import { warmModel } from "../src/in-process/model-warmup.js";
import { QueryEmbedder } from "../src/in-process/query-embedder.js";

const log = createLogger({ service: "search-test", level: "silent" });

/** An embedder with a model to load, which loads when the test says so and counts the texts it embeds. */
class SlowToLoad extends HashingEmbedder {
  embedded = 0;
  private finish!: (err?: Error) => void;
  private readonly loading = new Promise<void>((resolve, reject) => (this.finish = (err) => (err ? reject(err) : resolve())));
  warmup(): Promise<void> {
    return this.loading;
  }
  loaded(err?: Error): Promise<void> {
    this.finish(err);
    return this.loading.catch(() => {});
  }
  override async embed(texts: readonly string[]): Promise<number[][]> {
    this.embedded += texts.length;
    return super.embed(texts);
  }
}

const queries = (embedder: SlowToLoad, modelReady: () => boolean) => new QueryEmbedder({ embedder, budgetMs: 2_000, cacheSize: 10, log, modelReady });

describe("the model loads at start, and searches do not wait for it", () => {
  it("answers queries without a vector while the model loads, and with one once it is in", async () => {
    const embedder = new SlowToLoad();
    const ready = warmModel(embedder, log);
    const embedderOfQueries = queries(embedder, ready);
    expect(ready()).toBe(false);
    expect(await embedderOfQueries.embed("how heavy is the crate")).toBeNull();
    expect(embedder.embedded).toBe(0);

    await embedder.loaded();
    expect(ready()).toBe(true);
    // The query answered without a vector was not cached as such: it gets its vector now.
    expect(await embedderOfQueries.embed("how heavy is the crate")).not.toBeNull();
    expect(embedder.embedded).toBe(1);
  });

  it("counts a failed load as done, so each query asks the model again", async () => {
    const embedder = new SlowToLoad();
    const ready = warmModel(embedder, log);
    await embedder.loaded(new Error("no model file"));
    expect(ready()).toBe(true);
    expect(await queries(embedder, ready).embed("crate")).not.toBeNull();
  });

  it("is ready from the start for an embedder with nothing to load, or none", () => {
    expect(warmModel(new HashingEmbedder(), log)()).toBe(true);
    expect(warmModel(null, log)()).toBe(true);
  });
});
