/**
 * Pre-parser for the Mcp-Method and Mcp-Name headers that 2026-07-28 clients mirror from the
 * request body. The values are untrusted (the SDK cross-checks them against the body on the
 * modern path; 2025-era requests usually carry none), so they are used for one thing only: the
 * labels of a request counter. Each is reduced to a closed allowlist before it becomes a label,
 * so a caller cannot mint label values (ids, free text) and blow up the metric's cardinality.
 * Authorization and the tool-call accounting never read them.
 */
import type { RequestHandler } from "express";
import { MEMORY_RESOURCE_SCHEME, MEMORY_RESOURCE_TEMPLATE, PROMPT_NAMES, TOOL_NAMES } from "../mcp/catalog.js";
import type { GatewayMetrics } from "./metrics.js";

/** The request methods a client may send us; anything else is labelled "other". */
export const KNOWN_MCP_METHODS = [
  "server/discover",
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "prompts/list",
  "prompts/get",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "completion/complete",
  "logging/setLevel",
  "notifications/initialized",
  "notifications/cancelled",
] as const;

/** Label for a header that is present but not on the allowlist. */
export const OTHER_LABEL = "other";
/** Label for a header that is absent (most 2025-era requests; methods without a name). */
export const NONE_LABEL = "none";

const METHODS = new Set<string>(KNOWN_MCP_METHODS);
const TOOLS = new Set<string>(TOOL_NAMES);
const PROMPTS = new Set<string>(PROMPT_NAMES);
const MEMORY_URI_PREFIX = `${MEMORY_RESOURCE_SCHEME}://memory/`;

function single(value: string | string[] | undefined): string | undefined {
  if (Array.isArray(value)) return value.length === 1 ? value[0] : OTHER_LABEL;
  return value;
}

export function mcpMethodLabel(header: string | string[] | undefined): string {
  const value = single(header);
  if (value === undefined) return NONE_LABEL;
  return METHODS.has(value) ? value : OTHER_LABEL;
}

/** The name label depends on the (already reduced) method: a tool, a prompt, or the resource template, never a raw URI. */
export function mcpNameLabel(method: string, header: string | string[] | undefined): string {
  const value = single(header);
  if (value === undefined) return NONE_LABEL;
  switch (method) {
    case "tools/call":
      return TOOLS.has(value) ? value : OTHER_LABEL;
    case "prompts/get":
      return PROMPTS.has(value) ? value : OTHER_LABEL;
    case "resources/read":
      return value.startsWith(MEMORY_URI_PREFIX) ? MEMORY_RESOURCE_TEMPLATE : OTHER_LABEL;
    default:
      return OTHER_LABEL;
  }
}

/** Counts each authenticated /mcp request by its reduced headers; runs after auth, before the SDK. */
export function countMcpRequests(metrics: GatewayMetrics): RequestHandler {
  return (req, _res, next) => {
    const method = mcpMethodLabel(req.headers["mcp-method"]);
    metrics.mcpRequests.inc({ method, name: mcpNameLabel(method, req.headers["mcp-name"]) });
    next();
  };
}
