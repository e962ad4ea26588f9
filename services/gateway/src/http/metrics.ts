import { createMetricsRegistry } from "@3ngram/runtime";
import { Counter, type Registry } from "prom-client";

export interface GatewayMetrics {
  registry: Registry;
  /** Labelled by route template and status code: never by raw path, so ids never become labels. */
  httpRequests: Counter<"route" | "status">;
  /** outcome is "ok" or the reason code of the failure. */
  toolCalls: Counter<"tool" | "outcome">;
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
  };
}
