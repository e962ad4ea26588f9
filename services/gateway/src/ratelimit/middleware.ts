/**
 * Express side of the limits: spend a point, advertise the remaining budget, and answer 429 with
 * Retry-After when a layer is exhausted. The refusal's body depends on the endpoint (a REST error
 * body or a JSON-RPC error), so each mount passes its own responder.
 */
import { AppError } from "@3ngram/errors";
import { errorSummary, type Logger } from "@3ngram/runtime";
import type { Request, RequestHandler, Response } from "express";
import { requestIdOf } from "../http/locals.js";
import type { GatewayMetrics } from "../http/metrics.js";
import { sendError } from "../rest/errors.js";
import { LIMIT_WINDOW_SECONDS, type LayerLimiter, type LimitLayer, type Quota } from "./limiter.js";

export type LimitedResponder = (res: Response, quota: Quota, layer: LimitLayer) => void;

/** The key a request is counted under for one layer; undefined skips the layer for this request. */
export type LimitKeyOf = (req: Request, res: Response) => string | undefined;

export interface LimitDeps {
  metrics: GatewayMetrics;
  log: Logger;
}

const LAYER_NAMES: Record<LimitLayer, string> = {
  ip: "per client address",
  user: "per user",
  key: "per credential",
  completion: "completions per user",
};

/** One budget a request is counted in, and the key it is counted under there. */
export interface CountedLayer {
  limiter: LayerLimiter;
  keyOf: LimitKeyOf;
}

/**
 * Charges a request one point in each layer (a layer whose key is undefined skips it). Layers are
 * checked in their order (the first one that refuses answers the request) but spent in one wait:
 * every layer is charged at once, so with Redis the counters cost one round trip instead of one
 * per layer. A layer after the one that refused would never have been asked in turn, so its point
 * is given back before the refusal is answered; what is counted afterwards is what checking one
 * layer after another would have left (ADR-0045). Store failures are absorbed by the insurance
 * limiter; a limiter that still throws is a bug, and must not take the API down with it, so that
 * layer lets the request through (fail open).
 */
export function limitRequests(layers: readonly CountedLayer[], onLimited: LimitedResponder, deps: LimitDeps): RequestHandler {
  return async (req, res, next) => {
    const counted: Array<{ limiter: LayerLimiter; key: string }> = [];
    for (const { limiter, keyOf } of layers) {
      const key = keyOf(req, res);
      if (key !== undefined) counted.push({ limiter, key });
    }
    const outcomes = await Promise.allSettled(counted.map(({ limiter, key }) => limiter.consume(key)));
    for (const [i, outcome] of outcomes.entries()) {
      const { limiter } = counted[i]!;
      if (outcome.status === "rejected") {
        deps.log.error({ request_id: requestIdOf(res), layer: limiter.layer, error: errorSummary(outcome.reason) }, "rate limit check failed");
        continue;
      }
      const quota = outcome.value;
      advertise(res, quota);
      if (quota.allowed) continue;
      await Promise.all(counted.slice(i + 1).map(({ limiter: later, key }) => later.refund(key)));
      deps.metrics.rateLimited.inc({ layer: limiter.layer });
      onLimited(res, quota, limiter.layer);
      return;
    }
    next();
  };
}

/**
 * RateLimit-* headers (draft-ietf-httpapi-ratelimit-headers, the separate-field form) for the
 * tightest layer this request was counted in. A refusal always shows the layer that refused.
 */
export function advertise(res: Response, quota: Quota): void {
  const shown = res.locals.rateLimitQuota as Quota | undefined;
  if (quota.allowed && shown !== undefined && shown.remaining <= quota.remaining) return;
  res.locals.rateLimitQuota = quota;
  res.set({
    "RateLimit-Policy": `${quota.limit};w=${LIMIT_WINDOW_SECONDS}`,
    "RateLimit-Limit": String(quota.limit),
    "RateLimit-Remaining": String(quota.remaining),
    "RateLimit-Reset": String(quota.resetSeconds),
  });
}

function limitedMessage(quota: Quota, layer: LimitLayer): string {
  return `rate limit exceeded (${LAYER_NAMES[layer]}, ${quota.limit} requests per minute); retry after ${quota.resetSeconds} s`;
}

/** /api/v1: the REST error body with reason rate_limited. */
export function restLimited(log: Logger): LimitedResponder {
  return (res, quota, layer) => {
    res.set("Retry-After", String(quota.resetSeconds));
    sendError(res, new AppError("rate_limited", limitedMessage(quota, layer)), log);
  };
}

/** JSON-RPC's implementation-defined server-error range; the HTTP status and data.reason say which. */
const RATE_LIMITED_JSONRPC_CODE = -32000;

/** The JSON-RPC error a refused call gets: the whole request's on the door, or one call's in a batch. */
export function rateLimitedRpcError(id: string | number | null, quota: Quota, layer: LimitLayer) {
  return {
    jsonrpc: "2.0" as const,
    id,
    error: {
      code: RATE_LIMITED_JSONRPC_CODE,
      message: limitedMessage(quota, layer),
      data: { reason: "rate_limited", retryAfterSeconds: quota.resetSeconds },
    },
  };
}

/** /mcp: a JSON-RPC error body, as the Origin check answers, so MCP clients can parse it. */
export function mcpLimited(log: Logger): LimitedResponder {
  return (res, quota, layer) => {
    log.warn({ request_id: requestIdOf(res), reason: "rate_limited", layer }, "request refused");
    res
      .status(429)
      .set("Retry-After", String(quota.resetSeconds))
      .json(rateLimitedRpcError(null, quota, layer));
  };
}
