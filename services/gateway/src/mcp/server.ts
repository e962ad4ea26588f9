/**
 * The MCP endpoint: a fresh McpServer per HTTP request (stateless, any gateway instance serves any
 * request), built by the SDK's createMcpHandler so both 2026-07-28 (server/discover) and 2025-era
 * (initialize) clients are served from one factory.
 */
import { AppError } from "@3ngram/errors";
import { MAX_REQUEST_BODY_BYTES } from "@3ngram/schema";
import { errorSummary, type Logger } from "@3ngram/runtime";
import { McpServer, createMcpHandler, type CallToolResult, type McpHttpHandler, type ServerContext, type ToolCallback } from "@modelcontextprotocol/server";
import type { z } from "zod";
import { fromAuthInfo } from "../auth/api-key.js";
import type { MemoryClient } from "../clients/memory.js";
import type { SearchClient } from "../clients/search.js";
import type { GatewayMetrics } from "../http/metrics.js";
import { isCallerFault, toolError } from "./errors.js";
import type { ToolDefinition } from "./tool.js";
import { configureScopeTool } from "./tools/configure-scope.js";
import { getFactsTool } from "./tools/get-facts.js";
import { getMemoriesTool } from "./tools/get-memories.js";
import { rememberTool } from "./tools/remember.js";
import { resolveTool } from "./tools/resolve.js";
import { reviseTool } from "./tools/revise.js";
import { searchTool } from "./tools/search.js";

export const SERVER_NAME = "3ngram";
export const SERVER_VERSION = "0.1.0";

/** Advertised as discover/initialize `instructions`: how an agent should use the memory. */
export const SERVER_INSTRUCTIONS = [
  "3ngram is a shared, durable memory across sessions and agents.",
  "Call search before answering from memory or saying something is unknown; its coverage.abstained flag tells you when nothing relevant is stored.",
  "Use get_memories to read the full text of hits that are truncated.",
  "Call remember for decisions, commitments, blockers and preferences (and durable facts or patterns) — not for transcript noise or things you can re-derive.",
  "Always set scope (kebab-case, default \"personal\") and project when the work belongs to one, so later searches can narrow to it.",
  "Memory is append-only: correct or update something with revise (never a second remember), and settle commitments and blockers with resolve.",
  "Put measurable claims in remember's facts (unit in the predicate) and read them back, current or as of a past time, with get_facts.",
  "Use configure_scope to list scopes or add aliases and project mappings.",
].join(" ");

/** One hour, public: tool definitions are the same for every caller; tools/call is still authenticated. */
const DEFINITION_CACHE_HINT = { ttlMs: 60 * 60 * 1000, cacheScope: "public" } as const;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a heterogeneous list of tools
export const TOOLS: readonly ToolDefinition<any, any>[] = [rememberTool, searchTool, getFactsTool, getMemoriesTool, reviseTool, resolveTool, configureScopeTool];

export interface McpDeps {
  memory: MemoryClient;
  search: SearchClient;
  log: Logger;
  metrics: GatewayMetrics;
}

export function buildMcpServer(deps: McpDeps): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, version: SERVER_VERSION },
    {
      instructions: SERVER_INSTRUCTIONS,
      cacheHints: { "server/discover": DEFINITION_CACHE_HINT, "tools/list": DEFINITION_CACHE_HINT },
    },
  );
  for (const tool of TOOLS) registerTool(server, tool, deps);
  return server;
}

function registerTool<I extends z.ZodType, O extends z.ZodType>(server: McpServer, tool: ToolDefinition<I, O>, deps: McpDeps): void {
  const handle = async (input: z.output<I>, ctx: ServerContext): Promise<CallToolResult> => {
    const auth = fromAuthInfo(ctx.http?.authInfo);
    const requestId = auth?.requestId ?? "unknown";
    const log = deps.log.child({ request_id: requestId, tool: tool.name });
    const started = performance.now();
    try {
      // The HTTP layer refuses unauthenticated requests; this only guards against miswiring.
      if (auth === undefined) throw new AppError("unauthenticated", "no verified principal");
      const { principal } = auth;
      const requiredScope = typeof tool.requiredScope === "function" ? tool.requiredScope(input) : tool.requiredScope;
      if (!principal.scopes.includes(requiredScope)) throw new AppError("insufficient_scope", `${requiredScope} required`);
      const identity = { tenantId: principal.tenantId, userId: principal.userId, scopes: principal.scopes, actor: "user_mcp" };
      const output = tool.outputSchema.parse(await tool.run(input, { identity, memory: deps.memory, search: deps.search }));
      deps.metrics.toolCalls.inc({ tool: tool.name, outcome: "ok" });
      log.info({ outcome: "ok", ms: Math.round(performance.now() - started) }, "tool call");
      return { structuredContent: output as Record<string, unknown>, content: [{ type: "text", text: JSON.stringify(output) }] };
    } catch (err) {
      const { result, appError } = toolError(err, requestId);
      deps.metrics.toolCalls.inc({ tool: tool.name, outcome: appError.reason });
      const fields = { outcome: appError.reason, ms: Math.round(performance.now() - started) };
      if (isCallerFault(appError)) log.warn(fields, "tool call refused");
      else log.error({ ...fields, error: errorSummary(err) }, "tool call failed");
      return result;
    }
  };
  server.registerTool(
    tool.name,
    {
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema,
      outputSchema: tool.outputSchema,
      annotations: tool.annotations,
    },
    // The SDK types the arguments from the schema; with a generic schema it cannot resolve that type itself.
    handle as unknown as ToolCallback<I>,
  );
}

/** The fetch-shaped handler /mcp is served by; close() aborts in-flight modern exchanges. */
export function createMcpEndpoint(deps: McpDeps): McpHttpHandler {
  return createMcpHandler(() => buildMcpServer(deps), {
    // Messages can quote the request body (e.g. JSON parse errors), so only the error's class and code are logged.
    onerror: (error) => deps.log.warn({ error: { type: error.name, code: (error as { code?: unknown }).code } }, "mcp request rejected"),
    maxRequestBodySize: MAX_REQUEST_BODY_BYTES,
  });
}
