/**
 * The rule both of standalone's memory reclaimers follow (V8's heap, heap-compaction.ts; glibc's
 * arenas, malloc-trim.ts): on a timer, read a size; when it has grown more than a budget over the
 * lowest it has been since the last reclaim (at most what that reclaim left), and the minimum
 * interval has passed since that reclaim began, reclaim again. Reclaiming costs a pause or a
 * thread's time, so a size that keeps growing costs a bounded share of it, and a size that does
 * not grow costs one reading per check.
 */
/** When a reclaim is due: how much growth, how often the size is read, how soon after the last one. */
export interface GrowthBudget {
  /** Growth over the lowest size since the last reclaim that triggers the next one. */
  budgetBytes: number;
  /** How often the size is read. */
  checkMs: number;
  /** The shortest time between the starts of two reclaims, so a size that keeps growing costs a bounded share. */
  minIntervalMs: number;
}

export interface ReclaimOnGrowthOptions extends GrowthBudget {
  /** The watched size in bytes now. */
  size: () => number;
  /** Gives memory back, and answers the size to measure the next growth from. */
  reclaim: () => number | Promise<number>;
  /** Milliseconds now (tests pass their own clock). */
  now?: () => number;
  /** Told when a reclaim throws or rejects; the next one is tried as usual. */
  onError?: (err: unknown) => void;
}

export interface ReclaimOnGrowth {
  /** Checks once (what the timer does), and says whether a reclaim began. */
  check(): boolean;
  /** Reclaims begun so far. */
  readonly reclaims: number;
  close(): void;
}

export function startReclaimOnGrowth(options: ReclaimOnGrowthOptions): ReclaimOnGrowth {
  const now = options.now ?? Date.now;
  let baseline = options.size();
  let lastAt = now();
  let reclaims = 0;
  // An asynchronous reclaim still running: the size is not read again until it has answered.
  let running = false;
  const settle = (after: number) => {
    baseline = after;
    running = false;
  };
  const fail = (err: unknown) => {
    running = false;
    options.onError?.(err);
  };
  const check = (): boolean => {
    if (running) return false;
    const size = options.size();
    // Growth is counted from the lowest size since the last reclaim: memory given back by other
    // means (V8's own collections, say) lowers the mark, so a process that shrank after its
    // start-up peak and then grows again is caught before it is back at the peak.
    baseline = Math.min(baseline, size);
    if (now() - lastAt < options.minIntervalMs || size - baseline <= options.budgetBytes) return false;
    reclaims += 1;
    lastAt = now();
    running = true;
    try {
      const after = options.reclaim();
      if (typeof after === "number") settle(after);
      else after.then(settle, fail);
    } catch (err) {
      fail(err);
    }
    return true;
  };
  const timer = setInterval(check, options.checkMs);
  timer.unref();
  return {
    check,
    get reclaims() {
      return reclaims;
    },
    close: () => clearInterval(timer),
  };
}
