import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

export interface McpConnection {
  client: Client;
  /** Calls a tool and returns its structured result, or throws with the tool's error text. */
  call<T = Record<string, unknown>>(name: string, args: Record<string, unknown>): Promise<T>;
  /** Calls a tool expecting an isError result; returns its text. */
  callError(name: string, args: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

/**
 * The official MCP client SDK over Streamable HTTP, authenticated with an API key. `fetch` replaces
 * the transport's (to watch what the client sends).
 */
export async function connectMcp(mcpUrl: string, apiKey: string, options: { modern?: boolean; fetch?: typeof fetch } = {}): Promise<McpConnection> {
  const client = new Client({ name: "3ngram-tests", version: "1.0.0" }, options.modern ? { versionNegotiation: { mode: "auto" } } : {});
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  await client.connect(transport);
  const textOf = (result: { content?: unknown }) =>
    ((result.content as Array<{ type: string; text?: string }> | undefined) ?? [])
      .filter((c) => c.type === "text")
      .map((c) => c.text ?? "")
      .join("\n");
  return {
    client,
    async call<T>(name: string, args: Record<string, unknown>) {
      const result = await client.callTool({ name, arguments: args });
      if (result.isError) throw new Error(`${name} failed: ${textOf(result)}`);
      return result.structuredContent as T;
    },
    async callError(name: string, args: Record<string, unknown>) {
      const result = await client.callTool({ name, arguments: args });
      if (!result.isError) throw new Error(`${name} unexpectedly succeeded`);
      return textOf(result);
    },
    close: () => client.close(),
  };
}

/** Runs `use` on a fresh connection and closes it afterwards, whatever `use` did. */
export async function withMcp<T>(mcpUrl: string, apiKey: string, use: (mcp: McpConnection) => Promise<T>): Promise<T> {
  const mcp = await connectMcp(mcpUrl, apiKey);
  try {
    return await use(mcp);
  } finally {
    await mcp.close();
  }
}
