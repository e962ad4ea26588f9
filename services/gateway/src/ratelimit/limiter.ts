/**
 * One fixed-window budget per layer, backed by rate-limiter-flexible: RateLimiterRedis when the
 * gateway has a Redis (every instance shares the count), RateLimiterMemory otherwise (standalone).
 * Callers see the same small interface either way and never touch the library's promise
 * convention (a refusal *rejects* with a RateLimiterRes there).
 */
import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";

/** Where a budget applies; also the label of the rejection counter. */
export type LimitLayer = "ip" | "user" | "key" | "completion";

/** Every budget is "points per minute": one call costs one point (a JSON-RPC batch, one per call in it). */
export const LIMIT_WINDOW_SECONDS = 60;

/** The outcome of spending points, with what the RateLimit-* headers need. */
export interface Quota {
  /** Every point asked for fitted in the budget. */
  allowed: boolean;
  /** How many of the points asked for fitted (all of them when allowed; fewer, maybe none, when not). */
  granted: number;
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets (≥ 1), the value of Retry-After when refused. */
  resetSeconds: number;
}

export interface LayerLimiter {
  readonly layer: LimitLayer;
  readonly limit: number;
  /**
   * Spends `points` (default one) of `key`'s budget. Points that do not fit are still counted, as
   * a refused request is. Rejects only on a bug: store failures are absorbed (see createLayerLimiter).
   */
  consume(key: string, points?: number): Promise<Quota>;
  /**
   * Gives back `points` (default one) spent on `key`, for a point charged alongside a layer that
   * refused the request (see limitRequests). Best effort: a store failure leaves the point spent.
   */
  refund(key: string, points?: number): Promise<void>;
}

export interface LimiterStore {
  /** Present in distributed mode; absent means each instance counts on its own. */
  redis?: Redis;
  /** Namespace for every Redis key, e.g. "3ngram:rl" (a layer adds ":ip", ":user", …). */
  keyPrefix: string;
}

export function createLayerLimiter(layer: LimitLayer, limit: number, store: LimiterStore): LayerLimiter {
  const options = { keyPrefix: `${store.keyPrefix}:${layer}`, points: limit, duration: LIMIT_WINDOW_SECONDS };
  const limiter: RateLimiterAbstract =
    store.redis === undefined
      ? new RateLimiterMemory(options)
      : new RateLimiterRedis({
          ...options,
          storeClient: store.redis,
          // While the connection is down, go straight to the insurance limiter instead of queueing
          // the command behind ioredis's reconnect: a request must never wait on an outage.
          rejectIfRedisNotReady: true,
          // A Redis failure degrades to per-instance counting with the same budget, rather than
          // failing every request (closed) or dropping limits altogether (open). See ADR 0011.
          insuranceLimiter: new RateLimiterMemory(options),
        });
  return {
    layer,
    limit,
    async consume(key, points = 1) {
      try {
        return toQuota(await limiter.consume(key, points), limit, points, true);
      } catch (refusal) {
        if (refusal instanceof RateLimiterRes) return toQuota(refusal, limit, points, false);
        throw refusal;
      }
    },
    async refund(key, points = 1) {
      // One point too many costs a caller at most one request of its minute; not worth failing a response over.
      await limiter.reward(key, points).catch(() => undefined);
    },
  };
}

function toQuota(res: RateLimiterRes, limit: number, points: number, allowed: boolean): Quota {
  // consumedPoints already includes these points: what was left before them is what fitted.
  const granted = allowed ? points : Math.min(points, Math.max(0, limit - (res.consumedPoints - points)));
  return {
    allowed,
    granted,
    limit,
    remaining: Math.max(0, res.remainingPoints),
    resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  };
}
