/**
 * /mcp's body, read into the JSON-RPC message the SDK is handed, or refused in JSON-RPC's own
 * terms before the SDK sees it. Two steps, mounted apart (the batch charge and the request counter
 * sit between them) but with the one job of turning the bytes into a message the SDK can serve:
 *
 * - readMcpBody: the same reader as REST's (http/json-body.ts), so Content-Encoding means the same
 *   on both: gzip, deflate and br are decoded within the same bound, any other encoding is 415,
 *   and an encoded body is never parsed as plain. The SDK then gets the parsed body and reads
 *   nothing itself. A POST whose media type is not JSON is left unread for the SDK to refuse (415).
 * - refuseMalformedParams: malformed request params are the client's mistake, so they are -32602
 *   (invalid params) on every method. The SDK checks most requests against the protocol's own
 *   schemas but answers a failure on prompts/get, resources/read, completion/complete and
 *   initialize as -32603 with the raw validation output (which could quote what was sent). So the
 *   same protocol schemas (the SDK's specTypeSchemas) are run over each single request here, and a
 *   failure is answered naming the fields; a request that passes goes on untouched.
 */
import { inputProblems, type ValidationIssue } from "@3ngram/errors";
import { MAX_REQUEST_BODY_BYTES } from "@3ngram/schema";
import type { Logger } from "@3ngram/runtime";
import { ProtocolErrorCode, isJsonContentType, specTypeSchemas, type SpecTypeName } from "@modelcontextprotocol/server";
import type { IncomingMessage } from "node:http";
import { Router, type ErrorRequestHandler, type RequestHandler, type Response } from "express";
import { bodyWasEmpty, readJsonBody } from "./json-body.js";
import { requestIdOf } from "./locals.js";
import { requestFault } from "./request-faults.js";

const carriesJson = (req: IncomingMessage) => req.method === "POST" && isJsonContentType(req.headers["content-type"] ?? null);

export function readMcpBody(log: Logger): RequestHandler {
  const refuse = (res: Response, status: number, code: number, message: string) => {
    log.warn({ request_id: requestIdOf(res), reason: "unreadable_body", status }, "request refused");
    res.status(status).json({ jsonrpc: "2.0", id: null, error: { code, message } });
  };
  const refuseEmpty: RequestHandler = (req, res, next) => {
    // body-parser makes {} of an empty body; the SDK answers an empty body as unparseable JSON.
    if (carriesJson(req) && bodyWasEmpty(req)) refuse(res, 400, -32700, "Parse error: Invalid JSON");
    else next();
  };
  const answerFault: ErrorRequestHandler = (err: unknown, _req, res, next) => {
    const fault = requestFault(err, { maxBodyBytes: MAX_REQUEST_BODY_BYTES });
    if (fault === undefined) {
      next(err);
      return;
    }
    if (fault.status === 413) refuse(res, 413, -32000, `Payload Too Large: Request body must not exceed ${MAX_REQUEST_BODY_BYTES} bytes`);
    else if (fault.status === 415) refuse(res, 415, -32000, `Unsupported Media Type: ${fault.detail}`);
    else if (fault.detail === "malformed JSON body") refuse(res, 400, -32700, "Parse error: Invalid JSON");
    else refuse(res, 400, -32700, `Parse error: ${fault.detail}`);
  };
  return Router().use(readJsonBody({ strict: false, accepts: carriesJson }), refuseEmpty, answerFault);
}

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

export interface RpcRequest {
  id: string | number;
  method: string;
  params?: unknown;
}

/** A single JSON-RPC request (a method and an id), told apart cheaply: notifications, responses and batches are not. */
export function isRpcRequest(message: unknown): message is RpcRequest {
  if (message === null || typeof message !== "object" || Array.isArray(message)) return false;
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

/**
 * Runs on the body readMcpBody parsed (req.body; undefined when nothing was read). One request per
 * POST since 2025-06-18, so only a single request is checked; a batch is the SDK's to refuse.
 */
export function refuseMalformedParams(): RequestHandler {
  return async (req, res, next) => {
    const body: unknown = req.body;
    const problem = isRpcRequest(body) ? await paramsProblem(body) : undefined;
    if (problem === undefined) {
      next();
      return;
    }
    // Written as the SDK writes its own JSON answers: status 200, a bare JSON media type.
    const answer = { jsonrpc: "2.0", id: (body as RpcRequest).id, error: { code: ProtocolErrorCode.InvalidParams, message: problem } };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
  };
}
