/**
 * The rule standalone's memory reclaimers share (heap-compaction.ts, malloc-trim.ts), with a
 * reclaim that answers later, as the trim does from a pool thread: no second reclaim while one
 * runs, growth counted from the lowest size since the last one, and a failed reclaim reported.
 */
import { describe, expect, it } from "vitest";
import { startReclaimOnGrowth, type ReclaimOnGrowth } from "../src/reclaim-on-growth.js";

const MB = 1024 * 1024;

type Pending = { size: number; at: number; answers: Array<{ resolve: (after: number) => void; reject: (err: Error) => void }>; errors: unknown[] };

/** Runs `steps` against a trigger whose reclaims answer when the test says so, over a size (100 MB at first) and a clock the test sets; stops it afterwards. */
async function withPendingReclaims(steps: (state: Pending, trigger: ReclaimOnGrowth) => Promise<void>): Promise<void> {
  const state: Pending = { size: 100 * MB, at: 0, answers: [], errors: [] };
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
  try {
    await steps(state, trigger);
  } finally {
    trigger.close();
  }
}

describe("reclaiming on growth with a reclaim that answers later", () => {
  it("starts no second reclaim while one runs, and measures the next growth from its answer", async () => {
    await withPendingReclaims(async (state, trigger) => {
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
    });
  });

  it("counts growth from the lowest size since the last reclaim, not from where it started", async () => {
    await withPendingReclaims(async (state, trigger) => {
      // Started at 100 MB, then shrank to 80 by other means (V8 returning its heap's pages).
      state.at = 5_000;
      state.size = 80 * MB;
      expect(trigger.check()).toBe(false);
      // 97 MB is under where it started plus the budget, but 17 over its low.
      state.size = 97 * MB;
      expect(trigger.check()).toBe(true);
    });
  });

  it("reports a failed reclaim and tries again at the next growth", async () => {
    await withPendingReclaims(async (state, trigger) => {
      state.at = 5_000;
      state.size = 130 * MB;
      expect(trigger.check()).toBe(true);
      state.answers[0]!.reject(new Error("no trim"));
      await Promise.resolve();
      expect(state.errors).toHaveLength(1);
      state.at = 10_000;
      expect(trigger.check()).toBe(true);
    });
  });
});
