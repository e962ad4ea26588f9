import { expect } from "vitest";
import { Client, StreamableHTTPClientTransport, type ClientOptions } from "@modelcontextprotocol/client";

export interface Era {
  name: string;
  expectedVersion: string;
  options: ClientOptions;
}

/** The client configurations every MCP contract runs under: the SDK default (legacy), modern, and an older legacy version. */
export const ERAS: readonly [Era, Era, Era] = [
  { name: "legacy (default client)", expectedVersion: "2025-11-25", options: {} },
  { name: "modern (auto negotiation)", expectedVersion: "2026-07-28", options: { versionNegotiation: { mode: "auto" } } },
  { name: "legacy pinned to 2025-03-26", expectedVersion: "2025-03-26", options: { supportedProtocolVersions: ["2025-03-26"] } },
];

/** An official SDK client connected to `${baseUrl}/mcp` with an API key. */
export async function connect(baseUrl: string, apiKey: string, era: Era, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "gateway-contract", version: "1.0.0" }, era.options);
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${apiKey}`, ...headers } },
  });
  await client.connect(transport);
  return client;
}

export interface ToolResult {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
}

export async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

export function errorText(result: ToolResult): string {
  if (!result.isError) throw new Error(`expected an error result, got ${JSON.stringify(result)}`);
  return result.content.map((c) => c.text ?? "").join("\n");
}

/** A successful tool result's structured content, after checking the JSON text mirror carries the same object. */
export function structured(result: ToolResult): Record<string, unknown> {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  expect(result.structuredContent).toBeDefined();
  expect(JSON.parse(result.content[0]?.text ?? "null")).toEqual(result.structuredContent);
  return result.structuredContent!;
}

export interface VersionCase extends Era {
  /** True for the 2026-07-28 (server/discover) era, false for the initialize era. */
  modern: boolean;
}

/** Every protocol version the gateway serves, reached the way the official client reaches it. */
export const PROTOCOL_MATRIX: readonly VersionCase[] = [
  { name: "2026-07-28 via server/discover", expectedVersion: "2026-07-28", options: { versionNegotiation: { mode: "auto" } }, modern: true },
  ...["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"].map((v) => ({
    name: `${v} via initialize`,
    expectedVersion: v,
    options: { supportedProtocolVersions: [v] },
    modern: false,
  })),
];

/** One HTTP exchange as the client saw it: the JSON-RPC method sent, and the raw answer. */
export interface WireExchange {
  method: string | undefined;
  status: number;
  contentType: string;
  /** The response body as text (JSON, or SSE frames for 2025-era answers). */
  body: string;
  /** The response body's size in bytes as received. */
  bytes: number;
}

export interface RecordedClient {
  client: Client;
  /** Every exchange so far, in order. */
  wire: WireExchange[];
  /** Changes the bearer key sent from the next request on. */
  setKey(apiKey: string): void;
}

/**
 * An official client whose transport records every exchange and whose bearer key can be swapped
 * mid-session (to show that a cached catalog never stands in for authentication).
 */
export async function connectRecorded(baseUrl: string, apiKey: string, era: Era): Promise<RecordedClient> {
  let key = apiKey;
  const wire: WireExchange[] = [];
  const recordingFetch = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const headers = new Headers(init?.headers);
    headers.set("Authorization", `Bearer ${key}`);
    const response = await fetch(url, { ...init, headers });
    const raw = Buffer.from(await response.clone().arrayBuffer());
    let method: string | undefined;
    if (typeof init?.body === "string") {
      try {
        method = (JSON.parse(init.body) as { method?: string }).method;
      } catch {
        method = undefined;
      }
    }
    wire.push({ method, status: response.status, contentType: response.headers.get("content-type") ?? "", body: raw.toString("utf8"), bytes: raw.length });
    return response;
  };
  const client = new Client({ name: "gateway-surface", version: "1.0.0" }, era.options);
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { fetch: recordingFetch }));
  return { client, wire, setKey: (next) => (key = next) };
}

/** The JSON-RPC result objects inside a recorded answer (one JSON document, or the data lines of SSE frames). */
export function rpcResults(exchange: WireExchange): Record<string, unknown>[] {
  const documents = exchange.contentType.includes("text/event-stream")
    ? exchange.body
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trim())
        .filter(Boolean)
    : exchange.body.trim() === ""
      ? []
      : [exchange.body];
  return documents
    .map((d) => JSON.parse(d) as { result?: Record<string, unknown> })
    .filter((m) => m.result !== undefined)
    .map((m) => m.result!);
}

/**
 * Expects arguments refused per SEP-1303: an isError tool result whose text is
 * "invalid_input: <field>: <problem>; …". Returns that text and the fields it names, in order.
 */
export async function invalidArguments(
  promise: Promise<ToolResult>,
): Promise<{ message: string; data: { reason: string; field: string | undefined; fields: string[] } }> {
  const message = errorText(await promise);
  expect(message, message).toMatch(/^invalid_input: /);
  const fields = message
    .slice("invalid_input: ".length)
    .replace(/; and \d+ more$/, "")
    .split("; ")
    .map((problem) => problem.slice(0, problem.indexOf(": ")));
  return { message, data: { reason: "invalid_input", field: fields[0], fields } };
}

/** Expects a JSON-RPC -32602 (invalid params) rejection and returns its message and data. */
export async function invalidParams(promise: Promise<unknown>): Promise<{ message: string; data: Record<string, unknown> | undefined }> {
  const error = await promise.then(
    (value) => {
      throw new Error(`expected a -32602 error, got ${JSON.stringify(value)}`);
    },
    (err: unknown) => err as { code?: unknown; message?: unknown; data?: unknown },
  );
  expect(error.code, String(error.message)).toBe(-32602);
  return { message: String(error.message), data: error.data as Record<string, unknown> | undefined };
}
