/**
 * Hands an Express request on /mcp to the SDK's fetch-shaped handler and writes its Response back:
 * what @modelcontextprotocol/node's toNodeHandler does, without two costs it pays on every call.
 *
 * - The body is already parsed (http/mcp-body.ts) and handed over as `parsedBody`; given that, the
 *   SDK never reads the Request's own body (createMcpHandler classifies and serves the parsed
 *   value), so the Request is built without one instead of re-serialising the JSON into a stream.
 * - A JSON answer (every modern tools/call, and any error) is read whole and written in one piece
 *   with its Content-Length: one socket write, where streaming it writes the head and body and
 *   then the chunked terminator. An event stream (SSE) is still written as it comes, with the same
 *   back-pressure handling as toNodeHandler.
 *
 * A request without a parsed body (GET, DELETE) goes through the SDK's own toWebRequest, which
 * reads what there is. Failures answer as toNodeHandler does: 500 with a JSON-RPC internal error.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { toWebRequest } from "@modelcontextprotocol/node";
import { isJsonContentType, type AuthInfo, type McpHttpHandler } from "@modelcontextprotocol/server";
import { isRpcRequest } from "./mcp-body.js";

type McpNodeRequest = IncomingMessage & { auth?: AuthInfo };

export interface McpAdapterOptions {
  maxRequestBodySize: number;
  /** Told about a request that could not be handed over or handled (before the 500 goes out). */
  onerror: (error: Error) => void;
}

export function serveMcpOverNode(handler: McpHttpHandler, options: McpAdapterOptions) {
  return async (req: McpNodeRequest, res: ServerResponse, parsedBody: unknown): Promise<void> => {
    let finished = false;
    const abort = new AbortController();
    res.on("close", () => {
      if (!finished) abort.abort();
    });
    if (res.destroyed) abort.abort();
    const response = await answer(handler, req, parsedBody, abort.signal, options);
    await writeResponse(response, res, abort.signal);
    finished = true;
  };
}

/** The SDK's answer, or the one toNodeHandler gives when the request could not be handed over or handled. */
async function answer(handler: McpHttpHandler, req: McpNodeRequest, parsedBody: unknown, signal: AbortSignal, options: McpAdapterOptions): Promise<Response> {
  // The Request the SDK is given needs a URL, made from the Host header; one Node let through but
  // no URL can hold (a space in it, say) is the caller's error, not ours.
  if (!URL.canParse(`http://${hostOf(req)}/`)) {
    return Response.json(
      { jsonrpc: "2.0", error: { code: -32600, message: "Invalid Request: the Host header is not a host name" }, id: null },
      { status: 400 },
    );
  }
  try {
    const request =
      parsedBody === undefined ? await toWebRequest(req, undefined, { signal, maxRequestBodySize: options.maxRequestBodySize }) : bodilessRequest(req, signal);
    return await handler.fetch(request, { ...(req.auth !== undefined && { authInfo: req.auth }), ...(parsedBody !== undefined && { parsedBody }) });
  } catch (error) {
    if (error instanceof Error && error.name === "RequestBodyTooLargeError") {
      return Response.json({ jsonrpc: "2.0", error: { code: -32000, message: error.message }, id: null }, { status: 413, headers: { connection: "close" } });
    }
    try {
      options.onerror(error instanceof Error ? error : new Error(String(error)));
    } catch {
      // An observer's failure must not keep the caller from its answer.
    }
    return Response.json({ jsonrpc: "2.0", error: { code: -32603, message: "Internal server error" }, id: echoableId(parsedBody) }, { status: 500 });
  }
}

/** A JSON answer in one write with its length; anything else (an event stream) as it comes. */
async function writeResponse(response: Response, res: ServerResponse, signal: AbortSignal): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  if (response.body === null) {
    res.writeHead(response.status, headers);
    res.end();
    return;
  }
  if (isJsonContentType(response.headers.get("content-type"))) {
    const body = await readWhole(response);
    res.writeHead(response.status, { ...headers, "content-length": String(body.byteLength) });
    res.end(body);
    return;
  }
  res.writeHead(response.status, headers);
  await streamBody(response.body, res, signal);
  res.end();
}

/** The Request the SDK is given next to a parsed body: the caller's method, URL and headers, no body. */
function bodilessRequest(req: McpNodeRequest, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(":")) continue;
    // They describe a body this Request does not carry.
    if (name === "content-length" || name === "content-encoding" || name === "transfer-encoding") continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  return new Request(`http://${hostOf(req)}${req.url ?? "/"}`, { method: (req.method ?? "POST").toUpperCase(), headers, signal });
}

function hostOf(req: McpNodeRequest): string {
  return firstOf(req.headers.host) ?? firstOf(req.headers[":authority"]) ?? "localhost";
}

async function readWhole(response: Response): Promise<Buffer> {
  try {
    return Buffer.from(await response.arrayBuffer());
  } catch {
    // The SDK's stream failed mid-answer; toNodeHandler ends the response with what it had, here nothing.
    return Buffer.alloc(0);
  }
}

/** Writes an event stream as it comes, waiting on drain when the socket is full, until it ends or the caller goes away. */
async function streamBody(body: ReadableStream<Uint8Array>, res: ServerResponse, signal: AbortSignal): Promise<void> {
  let drained: (() => void) | undefined;
  res.on("drain", () => {
    drained?.();
    drained = undefined;
  });
  const closed = new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  const reader = body.getReader();
  try {
    for (let read = await reader.read(); !read.done && !signal.aborted; read = await reader.read()) {
      if (!res.write(read.value)) await Promise.race([new Promise<void>((resolve) => (drained = resolve)), closed]);
    }
  } catch {
    // The stream failed mid-answer: end what was sent, as toNodeHandler does.
  } finally {
    // Leaving early (the caller went away) stops the SDK's side of the stream, as ending a for await loop would.
    await reader.cancel().catch(() => undefined);
  }
}

function firstOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The id a JSON-RPC request carried, to echo in an error; null for anything else (as the SDK does). */
function echoableId(body: unknown): string | number | null {
  return isRpcRequest(body) ? body.id : null;
}
