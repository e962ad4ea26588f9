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
