/**
 * A JSON-RPC batch on /mcp costs one point per call in it, on every layer the request is counted
 * in (per client address, per credential, per user), so a batch of 50 spends what 50 single
 * requests would. The door (limitRequests) has already charged the request its first point on
 * each layer; this charges the batch's further calls once the body is read, layer by layer, each
 * layer only for the calls the one before let through. Calls that do not fit are answered with
 * the rate-limit error the single-call path gives (and Retry-After), and only those that fit run.
 * The completion budget needs nothing here: it is spent per completion/complete call as it runs.
 *
 * Batching is part of protocol 2025-03-26 only (2025-06-18 removed it, 2024-11-05 never had it,
 * and 2026-07-28 refuses it too), so a batch declared under any other version is refused whole,
 * before any of its calls runs.
 */
import { errorSummary, type Logger } from "@3ngram/runtime";
import type { McpHttpHandler } from "@modelcontextprotocol/server";
import type { RequestHandler } from "express";
import { requestIdOf } from "../http/locals.js";
import type { GatewayMetrics } from "../http/metrics.js";
import type { LimitLayer, Quota } from "./limiter.js";
import { advertise, rateLimitedRpcError, type CountedLayer } from "./middleware.js";

/** The one protocol revision with JSON-RPC batches; also what a request naming no version is taken to speak. */
const BATCHING_PROTOCOL_VERSION = "2025-03-26";

type RpcId = string | number;
type RpcError = ReturnType<typeof rateLimitedRpcError>;

/** The refusals each batch handed on to the SDK is owed, keyed by that (already filtered) batch. */
const owedRefusals = new WeakMap<object, { errors: RpcError[] }>();

/**
 * Runs after the body is read (req.body holds the parsed JSON) and before the SDK. A single
 * message passes untouched.
 */
export function limitBatchCalls(layers: readonly CountedLayer[], deps: { metrics: GatewayMetrics; log: Logger }): RequestHandler {
  return async (req, res, next) => {
    const body: unknown = req.body;
    if (!Array.isArray(body)) {
      next();
      return;
    }
    const version = declaredVersion(req.headers["mcp-protocol-version"], body);
    if (version !== BATCHING_PROTOCOL_VERSION) {
      deps.log.warn({ request_id: requestIdOf(res), reason: "batch_not_in_protocol" }, "request refused");
      res.status(400).json({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32600,
          // A header is the caller's text: only a well-formed version is echoed back.
          message: `Invalid Request: JSON-RPC batches are not part of ${/^\d{4}-\d{2}-\d{2}$/.test(version) ? `protocol version ${version}` : "the declared protocol version"}; send one message per request`,
        },
      });
      return;
    }
    const calls = body.filter(isCall);
    // The door charged one point; a batch without calls (notifications only) costs just that.
    let fitting = Math.max(0, calls.length - 1);
    let refusal: { quota: Quota; layer: LimitLayer } | undefined;
    try {
      for (const { limiter, keyOf } of layers) {
        const key = keyOf(req, res);
        if (key === undefined || fitting === 0) continue;
        const quota = await limiter.consume(key, fitting);
        advertise(res, quota);
        if (quota.granted < fitting) {
          deps.metrics.rateLimited.inc({ layer: limiter.layer }, fitting - quota.granted);
          refusal = { quota, layer: limiter.layer };
        }
        fitting = quota.granted;
      }
    } catch (err) {
      // As at the door: a limiter bug must not take /mcp down, so the batch goes through (fail open).
      deps.log.error({ request_id: requestIdOf(res), error: errorSummary(err) }, "rate limit check failed");
      next();
      return;
    }
    if (refusal === undefined) {
      next();
      return;
    }
    const { quota, layer } = refusal;
    // The first call and the `fitting` after it run; the calls after those are refused.
    const refused = new Set(calls.slice(1 + fitting));
    const kept = body.filter((message) => !refused.has(message));
    owedRefusals.set(kept, { errors: [...refused].map((call) => rateLimitedRpcError(call.id, quota, layer)) });
    deps.log.warn({ request_id: requestIdOf(res), reason: "rate_limited", layer, refused_calls: refused.size }, "batch calls refused");
    res.set("Retry-After", String(quota.resetSeconds));
    req.body = kept;
    next();
  };
}

/** Wraps the MCP handler so a batch's refused calls are answered alongside the calls that ran. */
export function withRefusedBatchCalls(handler: McpHttpHandler): McpHttpHandler {
  const fetch: McpHttpHandler["fetch"] = async (request, options) => {
    const response = await handler.fetch(request, options);
    const owed = options?.parsedBody === undefined || options.parsedBody === null ? undefined : owedRefusals.get(options.parsedBody as object);
    if (owed === undefined || !response.ok || response.body === null) return response;
    const type = response.headers.get("content-type") ?? "";
    if (type.startsWith("text/event-stream")) return prependEvents(response, owed.errors);
    if (type.startsWith("application/json")) {
      const answered: unknown = await response.json();
      const all = [...(Array.isArray(answered) ? answered : [answered]), ...owed.errors];
      return new Response(JSON.stringify(all), { status: response.status, headers: response.headers });
    }
    return response;
  };
  return { fetch, close: () => handler.close(), notify: handler.notify, bus: handler.bus };
}

/** The refusals go out first, as SSE message events, then the SDK's own stream as it comes. */
function prependEvents(response: Response, errors: readonly RpcError[]): Response {
  const head = new TextEncoder().encode(errors.map((error) => `event: message\ndata: ${JSON.stringify(error)}\n\n`).join(""));
  const reader = response.body!.getReader();
  let sentHead = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!sentHead) {
        sentHead = true;
        controller.enqueue(head);
        return;
      }
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, { status: response.status, headers: response.headers });
}

function isCall(message: unknown): message is { id: RpcId; method: string } {
  if (message === null || typeof message !== "object") return false;
  const { id, method } = message as Record<string, unknown>;
  return typeof method === "string" && (typeof id === "string" || typeof id === "number");
}

/** The MCP-Protocol-Version header, else an initialize in the batch, else the version a headerless request speaks. */
function declaredVersion(header: string | string[] | undefined, batch: readonly unknown[]): string {
  if (typeof header === "string") return header.trim();
  if (Array.isArray(header)) return header.join(",");
  for (const message of batch) {
    if (message === null || typeof message !== "object") continue;
    const { method, params } = message as Record<string, unknown>;
    if (method !== "initialize" || params === null || typeof params !== "object") continue;
    const named = (params as Record<string, unknown>).protocolVersion;
    if (typeof named === "string") return named;
  }
  return BATCHING_PROTOCOL_VERSION;
}
