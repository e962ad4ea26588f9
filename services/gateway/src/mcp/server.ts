/**
 * The MCP endpoint: a fresh McpServer per HTTP request (stateless, any gateway instance serves any
 * request), built by the SDK's createMcpHandler so both 2026-07-28 (server/discover) and 2025-era
 * (initialize) clients are served from one factory. Each server carries the tools, the two
 * prompts (with debrief.scope completion), the memory resource template, the instructions from
 * the jobs table and a cache hint for every cacheable result.
 *
 * Why not one server for many requests: the SDK (@modelcontextprotocol/server 2.4.0, dist/index.mjs)
 * binds the factory's instance to the one exchange. createMcpHandler's serveModern calls
 * assertNotServing (a still-connected instance is refused: "Return a new instance for each
 * request"), then stamps the request onto the instance itself: setNegotiatedProtocolVersion,
 * installModernOnlyHandlers (a server/discover handler) and seedClientIdentityFromEnvelope (client
 * capabilities and info), and invoke() connects it to a PerRequestHTTPServerTransport whose close
 * chain ends the exchange; createLegacyStatelessFallback connects it to a fresh
 * WebStandardStreamableHTTPServerTransport and closes both when the response is done, without
 * waiting. Server.connect (dist/mcp-*.mjs) throws AlreadyConnected while a transport is attached,
 * and resets the negotiated version only for an instance a per-request transport bound. So an
 * instance cannot serve two requests at once, and one served again would carry the previous
 * request's era (a 2025-era tools/call after a 2026-07-28 one would be encoded for 2026-07-28).
 *
 * What makes the per-request server cheap instead: what does not depend on the request (each tool's
 * handler, converted schemas and registration config) is built once per endpoint, so a request only
 * registers it; and a tools/call (the hot path) gets a server carrying the called tool alone, with no
 * prompts and no resource template. For a tools/call the SDK reads only that tool's registration
 * (McpServer.toolInputSchemaJson for SEP-2243 Mcp-Param headers, resolveScopeChallenge's tools/call
 * case) and our dispatcher below; the capabilities prompts and completion add are read only by
 * initialize, server/discover and subscriptions/listen, which get the whole server. The body the
 * gateway already parsed (and checked, http/mcp-body.ts) tells the factory which tool a request calls.
 *
 * tools/call is dispatched here rather than by McpServer's built-in handler so that arguments
 * are parsed by the tool's own zod schema and a refusal names every offending field, never a
 * value. Per SEP-1303 (protocol 2025-11-25) that refusal is a tool execution error, an isError
 * result the model reads and corrects itself from, the same on every protocol version
 * (docs/adr/0018-tool-argument-errors-are-tool-results.md). An unknown tool and a malformed
 * request stay JSON-RPC errors (-32602).
 */
import { AppError, inputProblems, type InputProblem } from "@3ngram/errors";
import { MAX_REQUEST_BODY_BYTES } from "@3ngram/schema";
import { errorSummary, type Logger } from "@3ngram/runtime";
import {
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  createMcpHandler,
  type CallToolRequest,
  type CallToolResult,
  type McpHttpHandler,
  type McpRequestContext,
  type ServerContext,
  type StandardSchemaWithJSON,
  type ToolCallback,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { trace } from "@opentelemetry/api";
import { fromAuthInfo } from "../auth/api-key.js";
import type { MemoryPeer } from "../clients/memory.js";
import type { SearchPeer } from "../clients/search.js";
import { isRpcRequest } from "../http/mcp-body.js";
import type { GatewayMetrics } from "../http/metrics.js";
import type { LayerLimiter } from "../ratelimit/limiter.js";
import { CACHE_HINTS } from "./cache.js";
import { cachedJsonSchema } from "./cached-json-schema.js";
import { isCallerFault, toolError } from "./errors.js";
import { SERVER_INSTRUCTIONS } from "./jobs.js";
import { registerPrompts } from "./prompts.js";
import { registerMemoryResource } from "./resources.js";
import type { ToolDefinition } from "./tool.js";
import { briefingTool } from "./tools/briefing.js";
import { configureScopeTool } from "./tools/configure-scope.js";
import { describeEnvironmentTool } from "./tools/describe-environment.js";
import { getFactsTool } from "./tools/get-facts.js";
import { getMemoriesTool } from "./tools/get-memories.js";
import { handoffTool } from "./tools/handoff.js";
import { rememberTool } from "./tools/remember.js";
import { resolveTool } from "./tools/resolve.js";
import { reviewProposalsTool } from "./tools/review-proposals.js";
import { reviseTool } from "./tools/revise.js";
import { searchTool } from "./tools/search.js";
import { SERVER_NAME, SERVER_VERSION, TOOL_NAMES, type ToolName } from "./catalog.js";

/** Advertised as discover/initialize `instructions`; built from the jobs table in jobs.ts. */
export { SERVER_INSTRUCTIONS };

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a heterogeneous set of tools
const TOOL_BY_NAME: Readonly<Record<ToolName, ToolDefinition<any, any>>> = {
  briefing: briefingTool,
  search: searchTool,
  get_memories: getMemoriesTool,
  remember: rememberTool,
  revise: reviseTool,
  resolve: resolveTool,
  get_facts: getFactsTool,
  handoff: handoffTool,
  configure_scope: configureScopeTool,
  review_proposals: reviewProposalsTool,
  describe_environment: describeEnvironmentTool,
};

/** The tools in catalog order (TOOL_NAMES: the order an agent should learn them), which is how tools/list lists them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a heterogeneous list of tools
export const TOOLS: readonly ToolDefinition<any, any>[] = TOOL_NAMES.map((name) => TOOL_BY_NAME[name]);

export interface McpDeps {
  memory: MemoryPeer;
  search: SearchPeer;
  log: Logger;
  metrics: GatewayMetrics;
  /** Per-user completion budget, shared by every request (and, with Redis, every instance). */
  completionLimiter: LayerLimiter;
}

/** A tool's handler for arguments that already parsed, as registered with the SDK. */
type ToolHandler = (input: unknown, ctx: ServerContext) => Promise<CallToolResult>;

/**
 * What initialize and server/discover advertise. A stateless server has no stream to push
 * list_changed notifications on, and its lists change only with a deployment (which the catalog
 * cache hints cover), so none of the lists claims them; McpServer would otherwise claim all three.
 */
export const SERVER_CAPABILITIES = {
  tools: { listChanged: false },
  prompts: { listChanged: false },
  resources: { listChanged: false },
} as const;

/** One tool, ready to register: its definition, its handler and the SDK config (schemas already converted). */
interface RegistryEntry {
  tool: ToolDefinition<z.ZodType, z.ZodType>;
  handle: ToolHandler;
  config: {
    title: string;
    description: string;
    inputSchema: StandardSchemaWithJSON;
    outputSchema: StandardSchemaWithJSON;
    annotations: ToolDefinition<z.ZodType, z.ZodType>["annotations"];
  };
}

/**
 * The tools with their handlers and SDK configs, built once per endpoint: nothing in them depends
 * on the request (the caller comes in through each call's context), so a request only registers them.
 */
type ToolRegistry = ReadonlyMap<string, RegistryEntry>;

function buildToolRegistry(deps: McpDeps): ToolRegistry {
  const registry = new Map<string, RegistryEntry>();
  for (const tool of TOOLS) registry.set(tool.name, toolEntry(tool, deps));
  return registry;
}

/**
 * One server for one HTTP request (`request.authInfo` is the verified caller the bearer middleware
 * passed on). Pass the endpoint's registry; without one it is built here (tests, one-off servers).
 * With `toolCall`, the request is a tools/call of that tool: the server carries it alone (see the
 * header comment); an unknown name registers nothing, and the dispatcher answers -32602.
 */
function buildMcpServer(
  deps: McpDeps,
  request: Pick<McpRequestContext, "authInfo"> = {},
  registry: ToolRegistry = buildToolRegistry(deps),
  toolCall?: { name: string },
): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, version: SERVER_VERSION },
    { instructions: SERVER_INSTRUCTIONS, cacheHints: CACHE_HINTS, capabilities: { ...SERVER_CAPABILITIES } },
  );
  const called = toolCall === undefined ? undefined : registry.get(toolCall.name);
  const registered = toolCall === undefined ? registry : new Map(called === undefined ? [] : [[toolCall.name, called]]);
  for (const [name, entry] of registered) {
    // The SDK types the arguments from the schema; with a generic schema it cannot resolve that type itself.
    server.registerTool(name, entry.config, entry.handle as unknown as ToolCallback<StandardSchemaWithJSON>);
  }
  // Replaces the handler registerTool installed (setRequestHandler overwrites); see the header comment.
  server.server.setRequestHandler("tools/call", (call, ctx) => dispatchToolCall(server, registry, call, ctx, deps));
  if (toolCall !== undefined) return server;
  registerPrompts(server, {
    memory: deps.memory,
    log: deps.log,
    metrics: deps.metrics,
    completionLimiter: deps.completionLimiter,
    principal: fromAuthInfo(request.authInfo)?.principal,
  });
  registerMemoryResource(server, { memory: deps.memory, log: deps.log });
  return server;
}

/**
 * tools/call: an unknown tool is a JSON-RPC -32602 error; arguments that do not parse are an
 * isError result naming every problem (field and reason, never the value); everything else goes
 * to the tool's handler.
 */
async function dispatchToolCall(server: McpServer, handlers: ToolRegistry, call: CallToolRequest, ctx: ServerContext, deps: McpDeps): Promise<CallToolResult> {
  const { name } = call.params;
  const entry = handlers.get(name);
  if (entry === undefined) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${name} not found`);
  const parsed = entry.tool.inputSchema.safeParse(call.params.arguments ?? {});
  if (parsed.success) {
    const result = await entry.handle(parsed.data, ctx);
    return server.server.projectCallToolResult(result, outputJsonSchema(entry.tool));
  }
  const problems = inputProblems(parsed.error.issues);
  const requestId = fromAuthInfo(ctx.http?.authInfo)?.requestId ?? "unknown";
  deps.metrics.toolCalls.inc({ tool: name, outcome: "invalid_input" });
  // Field paths can include whatever unknown keys the caller sent, so only their number is logged.
  deps.log.warn({ request_id: requestId, tool: name, outcome: "invalid_input", problems: problems.length }, "tool call refused");
  return { isError: true, content: [{ type: "text", text: invalidArgumentsText(problems) }] };
}

/** Problems named per refusal; a call rarely has more, and the message stays short. */
const MAX_NAMED_PROBLEMS = 5;

/**
 * "invalid_input: content: Too big: …; bogus: unrecognized key": every problem, so one round
 * trip fixes them all (a typo'd key usually comes with the missing key it was meant to be).
 */
function invalidArgumentsText(problems: readonly InputProblem[]): string {
  const named = problems.slice(0, MAX_NAMED_PROBLEMS).map((p) => `${p.field}: ${p.message}`);
  const more = problems.length > MAX_NAMED_PROBLEMS ? `; and ${problems.length - MAX_NAMED_PROBLEMS} more` : "";
  return `invalid_input: ${named.join("; ")}${more}`;
}

/**
 * The advertised output schema, as the SDK's result projection wants it (converted once per tool,
 * through the same cache tools/list uses). Like the SDK, a schema that cannot be converted
 * projects as if none were advertised; tools/list is where such a schema fails loudly.
 */
function outputJsonSchema(tool: ToolDefinition<z.ZodType, z.ZodType>): Record<string, unknown> | undefined {
  try {
    return cachedJsonSchema(tool.outputSchema)["~standard"].jsonSchema.output({ target: "draft-2020-12" });
  } catch {
    return undefined;
  }
}

function toolEntry<I extends z.ZodType, O extends z.ZodType>(tool: ToolDefinition<I, O>, deps: McpDeps): RegistryEntry {
  const handle = (input: z.output<I>, ctx: ServerContext): Promise<CallToolResult> =>
    // A span per tool call under the request's span; the service calls it makes are its children.
    tracer().startActiveSpan(`tools/call ${tool.name}`, { attributes: { "mcp.method.name": "tools/call", "gen_ai.tool.name": tool.name } }, async (span) => {
      try {
        return await runTool(input, ctx);
      } finally {
        span.end();
      }
    });
  const runTool = async (input: z.output<I>, ctx: ServerContext): Promise<CallToolResult> => {
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
      // Sent as the bridge read it, keys already in the schema's order: outputs are not re-parsed
      // per call (ADR-0029, 0040); test/integration/tool-outputs.int.test.ts checks every tool's.
      const output = await tool.run(input, { identity, memory: deps.memory, search: deps.search });
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
  return {
    tool: tool as unknown as ToolDefinition<z.ZodType, z.ZodType>,
    handle: handle as ToolHandler,
    config: {
      title: tool.title,
      description: tool.description,
      inputSchema: cachedJsonSchema(tool.inputSchema) as StandardSchemaWithJSON,
      outputSchema: cachedJsonSchema(tool.outputSchema) as StandardSchemaWithJSON,
      annotations: tool.annotations,
    },
  };
}

// Looked up at each use, never kept from module load: see startTracing (@3ngram/runtime).
const tracer = () => trace.getTracer("@3ngram/gateway");

/** The fetch-shaped handler /mcp is served by; close() aborts in-flight modern exchanges. */
export function createMcpEndpoint(deps: McpDeps): McpHttpHandler {
  const registry = buildToolRegistry(deps);
  // The tool each tools/call names, by request. The SDK hands the factory the very Request given
  // to fetch (requestInfo; createMcpHandler forwards it as is when the parsed body comes with it),
  // so a request that names no tool simply gets the whole server.
  const toolCalls = new WeakMap<Request, { name: string }>();
  const handler = createMcpHandler(
    (request) => buildMcpServer(deps, request, registry, request.requestInfo === undefined ? undefined : toolCalls.get(request.requestInfo)),
    {
      // Messages can quote the request body (e.g. JSON parse errors), so only the error's class and code are logged.
      onerror: (error) => deps.log.warn({ error: { type: error.name, code: (error as { code?: unknown }).code } }, "mcp request rejected"),
      maxRequestBodySize: MAX_REQUEST_BODY_BYTES,
    },
  );
  const fetch: McpHttpHandler["fetch"] = (request, options) => {
    const name = calledTool(options?.parsedBody);
    if (name !== undefined) toolCalls.set(request, { name });
    return handler.fetch(request, options);
  };
  return { fetch, close: () => handler.close(), notify: handler.notify, bus: handler.bus };
}

/** The tool a single tools/call request names (its params already fit CallToolRequest: http/mcp-body.ts). */
function calledTool(message: unknown): string | undefined {
  if (!isRpcRequest(message) || message.method !== "tools/call") return undefined;
  const name = (message.params as { name?: unknown } | undefined)?.name;
  return typeof name === "string" ? name : undefined;
}
