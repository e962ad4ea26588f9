/**
 * The heap compaction's rule: compact only when the resident heap has grown past the budget over
 * what the last compaction left live, and never twice within the minimum interval. The real collector is
 * checked once too: it is V8's, and it runs.
 */
import { describe, expect, it } from "vitest";
import { compactingGc, exposedGc, startHeapCompaction } from "../src/heap-compaction.js";
import type { ReclaimOnGrowth } from "../src/reclaim-on-growth.js";

const MB = 1024 * 1024;

function fakeHeap(startBytes: number) {
  const state = { used: startBytes, at: 0, collected: 0, liveAfterCollection: startBytes };
  return {
    state,
    options: {
      budgetBytes: 96 * MB,
      // Never fires during a test: the test calls check() itself.
      checkMs: 3_600_000,
      minIntervalMs: 20_000,
      residentBytes: () => state.used,
      usedBytes: () => state.used,
      now: () => state.at,
      collect: () => {
        state.collected += 1;
        state.used = state.liveAfterCollection;
      },
    },
  };
}

/** Runs `steps` against a compaction watching a heap that starts with 60 MB resident, and stops it afterwards. */
function withCompaction(steps: (heap: ReturnType<typeof fakeHeap>["state"], compaction: ReclaimOnGrowth) => void): void {
  const heap = fakeHeap(60 * MB);
  const compaction = startHeapCompaction(heap.options);
  try {
    steps(heap.state, compaction);
  } finally {
    compaction.close();
  }
}

describe("heap compaction", () => {
  it("leaves a heap that grows within its budget alone", () => {
    withCompaction((heap, compaction) => {
      heap.at = 60_000;
      heap.used = 156 * MB;
      expect(compaction.check()).toBe(false);
      expect(heap.collected).toBe(0);
    });
  });

  it("collects once the heap outgrows the budget, and measures the next growth from what the collection left", () => {
    withCompaction((heap, compaction) => {
      heap.at = 20_000;
      heap.used = 160 * MB;
      heap.liveAfterCollection = 80 * MB;
      expect(compaction.check()).toBe(true);
      expect(compaction.reclaims).toBe(1);
      // 90 MB over the new baseline of 80: within the budget.
      heap.at = 40_000;
      heap.used = 170 * MB;
      expect(compaction.check()).toBe(false);
      heap.used = 177 * MB;
      expect(compaction.check()).toBe(true);
      expect(heap.collected).toBe(2);
    });
  });

  it("waits out the minimum interval however fast the heap grows", () => {
    withCompaction((heap, compaction) => {
      heap.at = 1_000;
      heap.used = 400 * MB;
      expect(compaction.check()).toBe(false);
      heap.at = 20_000;
      expect(compaction.check()).toBe(true);
      heap.used = 400 * MB;
      heap.at = 39_999;
      expect(compaction.check()).toBe(false);
      expect(heap.collected).toBe(1);
    });
  });

  it("gets V8's own full collection without --expose-gc, and leaves the flag off for later contexts", () => {
    const gc = exposedGc();
    expect(typeof gc).toBe("function");
    compactingGc(gc)();
    expect(typeof (globalThis as { gc?: unknown }).gc).toBe("undefined");
  });
});
