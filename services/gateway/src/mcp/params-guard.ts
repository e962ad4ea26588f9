/**
 * Malformed request params are the client's mistake, so they are JSON-RPC -32602 (invalid
 * params) on every method. The SDK checks most requests against the protocol's own schemas but
 * answers a failure on prompts/get, resources/read, completion/complete and initialize as -32603
 * with the raw validation output (and the message could quote what was sent). This wrapper runs
 * the same protocol schemas (the SDK's specTypeSchemas) over each request before the SDK sees it
 * and answers a failure itself, naming the fields; a request that passes is handed on untouched
 * (its already-parsed body too).
 */
import { inputProblems, type ValidationIssue } from "@3ngram/errors";
import { ProtocolErrorCode, isJsonContentType, specTypeSchemas, type McpHttpHandler, type SpecTypeName } from "@modelcontextprotocol/server";

/** The request methods this server answers, and the protocol type their params must fit. */
const REQUEST_TYPES: Readonly<Record<string, SpecTypeName>> = {
  initialize: "InitializeRequest",
  ping: "PingRequest",
  "server/discover": "DiscoverRequest",
  "tools/list": "ListToolsRequest",
  "tools/call": "CallToolRequest",
  "prompts/list": "ListPromptsRequest",
  "prompts/get": "GetPromptRequest",
  "resources/list": "ListResourcesRequest",
  "resources/templates/list": "ListResourceTemplatesRequest",
  "resources/read": "ReadResourceRequest",
  "completion/complete": "CompleteRequest",
};

interface RpcRequest {
  id: string | number;
  method: string;
  params?: unknown;
}

function isRequest(message: unknown): message is RpcRequest {
  if (message === null || typeof message !== "object") return false;
  const { id, method } = message as Record<string, unknown>;
  return typeof method === "string" && (typeof id === "string" || typeof id === "number");
}

/** The -32602 message for a request whose params do not fit, or undefined when they do. */
async function paramsProblem(request: RpcRequest): Promise<string | undefined> {
  const type = Object.hasOwn(REQUEST_TYPES, request.method) ? REQUEST_TYPES[request.method] : undefined;
  if (type === undefined) return undefined; // the SDK answers unknown methods itself
  const schema = specTypeSchemas[type] as {
    "~standard": { validate(value: unknown): Promise<{ issues?: readonly ValidationIssue[] }> | { issues?: readonly ValidationIssue[] } };
  };
  const outcome = await schema["~standard"].validate({ method: request.method, params: request.params });
  if (outcome.issues === undefined) return undefined;
  const named = inputProblems(outcome.issues).map((p) => `${p.field}: ${p.message}`);
  return `Invalid params for ${request.method}: ${named.join("; ")}`;
}

function invalidParamsResponse(id: string | number, message: string): Response {
  const body = { jsonrpc: "2.0", id, error: { code: ProtocolErrorCode.InvalidParams, message } };
  return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
}

/** Told of each single request the guard hands on (its params already fit their protocol type). */
type AcceptedRequestListener = (request: Request, message: RpcRequest) => void;

export function refuseMalformedParams(handler: McpHttpHandler, onAccepted?: AcceptedRequestListener): McpHttpHandler {
  const guarded: McpHttpHandler["fetch"] = async (request, options) => {
    if (request.method !== "POST" || !isJsonContentType(request.headers.get("content-type"))) return handler.fetch(request, options);
    let body: unknown = options?.parsedBody;
    if (body === undefined) {
      // The node adapter has already read the body into memory, bounded by the endpoint's limit.
      // It is read here once, not cloned: with parsedBody given, the SDK reads nothing more from
      // the request (createMcpHandler's classifyEntryRequest and the legacy transport's
      // handlePostRequest both take the parsed body as it is).
      let text: string | undefined;
      try {
        text = await request.text();
        body = JSON.parse(text);
      } catch {
        // Not JSON: the SDK's own parse error, from a request carrying the same bytes.
        return handler.fetch(text === undefined ? request : new Request(request, { body: text }), options);
      }
    }
    // One request per POST since 2025-06-18; a batch is the SDK's to refuse.
    if (isRequest(body)) {
      const problem = await paramsProblem(body);
      if (problem !== undefined) return invalidParamsResponse(body.id, problem);
      onAccepted?.(request, body);
    }
    return handler.fetch(request, { ...options, parsedBody: body });
  };
  return { fetch: guarded, close: () => handler.close(), notify: handler.notify, bus: handler.bus };
}
