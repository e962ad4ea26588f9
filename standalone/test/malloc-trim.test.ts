/**
 * glibc's arenas trimmed as the process grows: the trigger's handling of a reclaim that answers
 * later (the trim runs on a pool thread), and the real `malloc_trim` giving back the pages of
 * blocks freed among live ones, which glibc's own free() keeps.
 */
import { describe, expect, it } from "vitest";
import { exposedGc } from "../src/heap-compaction.js";
import { runtimeIsGlibc } from "../src/malloc-arenas.js";
import { loadMallocTrim } from "../src/malloc-trim.js";
import { startReclaimOnGrowth } from "../src/reclaim-on-growth.js";

const MB = 1024 * 1024;

/** A reclaim that answers when the test says so, over a size and a clock the test sets. */
function pendingReclaims() {
  const state = { size: 100 * MB, at: 0, answers: [] as Array<{ resolve: (after: number) => void; reject: (err: Error) => void }>, errors: [] as unknown[] };
  const trigger = startReclaimOnGrowth({
    budgetBytes: 16 * MB,
    // Never fires during a test: the test calls check() itself.
    checkMs: 3_600_000,
    minIntervalMs: 5_000,
    size: () => state.size,
    now: () => state.at,
    reclaim: () => new Promise<number>((resolve, reject) => state.answers.push({ resolve, reject })),
    onError: (err) => state.errors.push(err),
  });
  return { state, trigger };
}

describe("reclaiming on growth with a reclaim that answers later", () => {
  it("starts no second reclaim while one runs, and measures the next growth from its answer", async () => {
    const { state, trigger } = pendingReclaims();
    try {
      state.at = 5_000;
      state.size = 130 * MB;
      expect(trigger.check()).toBe(true);
      state.at = 20_000;
      expect(trigger.check()).toBe(false);
      expect(state.answers).toHaveLength(1);
      state.answers[0]!.resolve(110 * MB);
      await Promise.resolve();
      // 125 MB is within 16 of the 110 the trim left; 127 is not.
      state.size = 125 * MB;
      expect(trigger.check()).toBe(false);
      state.size = 127 * MB;
      expect(trigger.check()).toBe(true);
      expect(trigger.reclaims).toBe(2);
    } finally {
      trigger.close();
    }
  });

  it("counts growth from the lowest size since the last reclaim, not from where it started", () => {
    const { state, trigger } = pendingReclaims();
    try {
      // Started at 100 MB, then shrank to 80 by other means (V8 returning its heap's pages).
      state.at = 5_000;
      state.size = 80 * MB;
      expect(trigger.check()).toBe(false);
      // 97 MB is under where it started plus the budget, but 17 over its low.
      state.size = 97 * MB;
      expect(trigger.check()).toBe(true);
    } finally {
      trigger.close();
    }
  });

  it("reports a failed reclaim and tries again at the next growth", async () => {
    const { state, trigger } = pendingReclaims();
    try {
      state.at = 5_000;
      state.size = 130 * MB;
      expect(trigger.check()).toBe(true);
      state.answers[0]!.reject(new Error("no trim"));
      await Promise.resolve();
      expect(state.errors).toHaveLength(1);
      state.at = 10_000;
      expect(trigger.check()).toBe(true);
    } finally {
      trigger.close();
    }
  });
});

describe("malloc_trim", () => {
  it("is found wherever the C library is glibc", () => {
    expect(loadMallocTrim() !== null).toBe(process.platform === "linux" && runtimeIsGlibc());
  });

  // The test machines run glibc (Debian); elsewhere there is nothing to trim and this fails first.
  it("gives back the pages of blocks freed among live ones", async () => {
    const trim = loadMallocTrim();
    if (trim === null) throw new Error("no malloc_trim: this test needs Linux with glibc");
    await trim();
    // 60 MB in 2 kB blocks (each from an arena, below the 128 kB of a mapping of its own), of
    // which every tenth stays live: glibc can return none of the freed ones' pages by itself.
    let blocks: Buffer[] = [];
    for (let i = 0; i < 30_000; i++) blocks.push(Buffer.allocUnsafeSlow(2048).fill(1));
    blocks = blocks.filter((_, i) => i % 10 === 0);
    // The freed buffers' memory goes back to malloc after V8 collects their objects, from a
    // background thread: collect, and give that thread time.
    exposedGc()();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = process.memoryUsage.rss();
    await trim();
    const after = process.memoryUsage.rss();
    expect(blocks).toHaveLength(3_000);
    expect((before - after) / MB).toBeGreaterThan(30);
  });
});
