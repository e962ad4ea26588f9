import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { startReclaimOnGrowth, type GrowthBudget, type ReclaimOnGrowth } from "./reclaim-on-growth.js";

/**
 * V8 lets the JavaScript heap grow to about twice what survived its last full collection, and its
 * own collections free objects without giving the pages they sat on back: at 5,000 memories into a
 * bulk load the heap had 177 MB resident for 70 MB of live objects, and a plain full collection
 * left it at 177. Only its memory reducer compacts the heap and returns the pages, once it finds
 * the process idle, a minute or so after the work stops (docs/benchmarks.md, issue 32).
 *
 * So this compacts the heap itself: on a timer, when the resident heap has grown more than a budget
 * over what the last compaction left, it runs a full collection that moves every surviving object
 * onto as few pages as it can, and the rest go back to the operating system. The price is a pause
 * (a few hundred milliseconds on a busy two-core machine) at most once per minimum interval, and
 * only while the heap is growing.
 */
export interface HeapCompactionOptions extends GrowthBudget {
  /** A full, synchronous, compacting collection; defaults to V8's own (compactingGc). */
  collect?: () => void;
  /** The resident heap in bytes; defaults to V8's figure. */
  residentBytes?: () => number;
  /** The heap's live objects in bytes, read right after a collection; defaults to V8's figure. */
  usedBytes?: () => number;
  /** Milliseconds now (tests pass their own clock). */
  now?: () => number;
}

/** 96 MB of growth over what the last compaction left (sized for V8's default 32 MB young generation; under the 8 MB cap of ADR-0043 it fires later); at most one pause in 20 s. */
const DEFAULT_HEAP_COMPACTION: HeapCompactionOptions = { budgetBytes: 96 * 1024 * 1024, checkMs: 1_000, minIntervalMs: 20_000 };

/**
 * The `gc` function V8 installs with --expose-gc, obtained without the flag on the command line:
 * the flag only decides whether a new context gets the function, so it is turned on for one new
 * context and off again. The function collects in the isolate that calls it, which is this one.
 */
export function exposedGc(): () => void {
  setFlagsFromString("--expose-gc");
  try {
    return runInNewContext("gc") as () => void;
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
}

/**
 * A full collection that compacts every page, not only the most fragmented ones: V8 reads
 * --compact-on-every-full-gc when a collection starts, so it is on for this one collection only.
 */
export function compactingGc(gc: () => void = exposedGc()): () => void {
  return () => {
    setFlagsFromString("--compact-on-every-full-gc");
    try {
      gc();
    } finally {
      setFlagsFromString("--no-compact-on-every-full-gc");
    }
  };
}

/** Compacts V8's heap whenever its resident size has outgrown the budget; `reclaims` counts the collections. */
export function startHeapCompaction(options: HeapCompactionOptions = DEFAULT_HEAP_COMPACTION): ReclaimOnGrowth {
  const {
    collect = compactingGc(),
    residentBytes = () => getHeapStatistics().total_physical_size,
    usedBytes = () => getHeapStatistics().used_heap_size,
    ...budgetAndClock
  } = options;
  return startReclaimOnGrowth({
    ...budgetAndClock,
    size: residentBytes,
    reclaim: () => {
      collect();
      // What survived, on the pages it was moved to (the freed ones are returned in the background).
      return usedBytes();
    },
  });
}
