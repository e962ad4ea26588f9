/**
 * The gateway's budgets, built once per process from config. In distributed mode (REDIS_URL set)
 * they are counted in Redis and shared by every instance; in standalone mode they live in this
 * process. Either way the layers and their keys are the same.
 */
import type { Logger } from "@3ngram/runtime";
import type { Redis } from "ioredis";
import type { GatewayMetrics } from "../http/metrics.js";
import { createLayerLimiter, type LayerLimiter, type LimiterStore } from "./limiter.js";
import { connectLimitStore, firstConnection } from "./redis.js";

export interface RateLimitSettings {
  /** Unset: in-process counting (standalone). */
  redisUrl?: string | undefined;
  keyPrefix: string;
  ipPerMinute: number;
  userPerMinute: number;
  keyPerMinute: number;
  completionsPerMinute: number;
}

export interface RateLimits {
  /** Edge layer: every /mcp, /api/v1, /oauth and /ui request, before authentication. */
  ip: LayerLimiter;
  /** After authentication: per tenant + user, across all their credentials. */
  user: LayerLimiter;
  /** After authentication: per credential (an API key, or an OAuth client's grant for one user). */
  key: LayerLimiter;
  /** completion/complete, per tenant + user. */
  completion: LayerLimiter;
  /** "redis" or "memory", for the startup log line. */
  backend: "redis" | "memory";
  close(): Promise<void>;
}

export async function createRateLimits(settings: RateLimitSettings, deps: { log: Logger; metrics: GatewayMetrics }): Promise<RateLimits> {
  const redis: Redis | undefined = settings.redisUrl === undefined ? undefined : connectLimitStore(settings.redisUrl, deps.log, deps.metrics);
  if (redis) await firstConnection(redis);
  const store: LimiterStore = { keyPrefix: settings.keyPrefix, ...(redis ? { redis } : {}) };
  return {
    ip: createLayerLimiter("ip", settings.ipPerMinute, store),
    user: createLayerLimiter("user", settings.userPerMinute, store),
    key: createLayerLimiter("key", settings.keyPerMinute, store),
    completion: createLayerLimiter("completion", settings.completionsPerMinute, store),
    backend: redis ? "redis" : "memory",
    async close() {
      // quit() waits for a reply that never comes while Redis is down; disconnect() does not wait.
      if (redis?.status === "ready") await redis.quit().catch(() => redis.disconnect());
      else redis?.disconnect();
    },
  };
}
