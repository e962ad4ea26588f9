import { createMetricsRegistry } from "@3ngram/runtime";
import { Counter, Gauge, type Registry } from "prom-client";

export interface GatewayMetrics {
  registry: Registry;
  /** Labelled by route template and status code: never by raw path, so ids never become labels. */
  httpRequests: Counter<"route" | "status">;
  /** outcome is "ok" or the reason code of the failure. */
  toolCalls: Counter<"tool" | "outcome">;
  /** MCP requests by their Mcp-Method / Mcp-Name headers, reduced to closed allowlists (telemetry only). */
  mcpRequests: Counter<"method" | "name">;
  /** completion/complete answers: ok, denied (no read scope), rate_limited or failed. */
  mcpCompletions: Counter<"outcome">;
  /** Requests refused with 429, by the layer whose budget ran out (ip, user, key, completion). */
  rateLimited: Counter<"layer">;
  /** 1 while the Redis behind the limits is unreachable and each instance counts on its own. */
  rateLimitStoreDegraded: Gauge;
}

export function createGatewayMetrics(registry: Registry = createMetricsRegistry("gateway")): GatewayMetrics {
  return {
    registry,
    httpRequests: new Counter({
      name: "threengram_gateway_http_requests_total",
      help: "HTTP requests answered by the gateway, by route template and status.",
      labelNames: ["route", "status"],
      registers: [registry],
    }),
    toolCalls: new Counter({
      name: "threengram_gateway_mcp_tool_calls_total",
      help: "MCP tool calls, by tool and outcome (ok or a reason code).",
      labelNames: ["tool", "outcome"],
      registers: [registry],
    }),
    mcpRequests: new Counter({
      name: "threengram_gateway_mcp_requests_total",
      help: "Authenticated MCP requests by the Mcp-Method and Mcp-Name headers, reduced to allowlists (other = not on the list, none = header absent).",
      labelNames: ["method", "name"],
      registers: [registry],
    }),
    mcpCompletions: new Counter({
      name: "threengram_gateway_mcp_completions_total",
      help: "completion/complete answers by outcome (ok, denied, rate_limited, failed); every outcome but ok answers an empty list.",
      labelNames: ["outcome"],
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: "threengram_gateway_rate_limited_total",
      help: "Requests refused by a rate limit, by layer (ip, user, key, completion).",
      labelNames: ["layer"],
      registers: [registry],
    }),
    rateLimitStoreDegraded: new Gauge({
      name: "threengram_gateway_rate_limit_store_degraded",
      help: "1 while the rate-limit Redis is unreachable and limits are counted per instance (insurance limiter), else 0.",
      registers: [registry],
    }),
  };
}
