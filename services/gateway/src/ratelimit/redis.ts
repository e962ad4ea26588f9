/**
 * The gateway's one Redis connection, used only for rate-limit counters. Like the queue's producer
 * connection (packages/queue) it is not lazy, so it reconnects by itself after an outage; unlike
 * it, every command is bounded tightly, because a limit check sits in front of every request.
 *
 * Outages are logged once when they start and once when they end, by error class and code only:
 * ioredis messages can name the host, and the URL itself may carry a password.
 */
import type { Logger } from "@3ngram/runtime";
import { Redis } from "ioredis";
import type { GatewayMetrics } from "../http/metrics.js";

/** A limit check that gets no answer within this long falls back to the in-memory insurance limiter. */
const COMMAND_TIMEOUT_MS = 500;
/** How long startup waits for the first connection before serving on the insurance limiter. */
const FIRST_CONNECT_WAIT_MS = 3_000;

export function connectLimitStore(redisUrl: string, log: Logger, metrics: GatewayMetrics): Redis {
  const redis = new Redis(redisUrl, {
    maxRetriesPerRequest: 1,
    commandTimeout: COMMAND_TIMEOUT_MS,
    // Nothing is queued while disconnected: the limiter answers from its insurance instead.
    enableOfflineQueue: false,
    // Reconnect quickly at first, then every 2 s at most, forever.
    retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    // The layers a request is counted in are charged in the same tick (limitRequests):
    // sent as one write, they cost one round trip.
    enableAutoPipelining: true,
  });
  let degraded = false;
  metrics.rateLimitStoreDegraded.set(0);
  const markDegraded = (err?: Error & { code?: unknown }) => {
    if (degraded) return;
    degraded = true;
    metrics.rateLimitStoreDegraded.set(1);
    const cause = err === undefined ? { type: "ConnectionClosed" } : { type: err.name, code: typeof err.code === "string" ? err.code : undefined };
    log.warn({ error: cause }, "rate-limit store unreachable: limits are counted per instance until it is back");
  };
  redis.on("error", (err: Error) => markDegraded(err));
  // A dropped connection may not raise "error" until a reconnect attempt fails; ioredis announces
  // the reconnect itself straight away (and never after our own quit/disconnect).
  redis.on("reconnecting", () => markDegraded());
  redis.on("ready", () => {
    if (!degraded) return;
    degraded = false;
    metrics.rateLimitStoreDegraded.set(0);
    log.info("rate-limit store reachable again: limits are shared across instances");
  });
  return redis;
}

/**
 * Resolves once the first connection attempt has settled either way (or the wait ran out), so a
 * freshly started gateway counts its first requests in Redis rather than in its insurance limiter.
 * A Redis that is down at boot does not stop the gateway from starting.
 */
export function firstConnection(redis: Redis): Promise<void> {
  if (redis.status === "ready") return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off("ready", done);
      redis.off("error", done);
      resolve();
    };
    const timer = setTimeout(done, FIRST_CONNECT_WAIT_MS);
    timer.unref();
    redis.once("ready", done);
    redis.once("error", done);
  });
}
