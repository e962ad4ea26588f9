/**
 * Interop with the legacy official SDK, @modelcontextprotocol/sdk 1.x (the latest 1.x, pinned in
 * the root package.json), which most MCP clients still embed: against the real gateway on the
 * real memory and search services it connects, lists, calls a read and a write tool (its client
 * validates structured results against the advertised output schemas with AJV), reads the memory
 * resource, gets a prompt, completes, is told about refused arguments as an isError result, and
 * runs the whole OAuth flow with its own auth() helper: discovery from the 401, dynamic client
 * registration, PKCE, the code exchange, tool calls on the access token, and refresh (rotation).
 */
import { randomUUID } from "node:crypto";
import { getMemoriesOutputSchema, memoryResourceSchema, rememberOutputSchema, searchOutputSchema } from "@3ngram/schema";
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { ConsentingHost } from "../../../../test/support/consenting-host.js";
import { tokenRequest } from "../../../../test/support/oauth.js";
import { startGateway, type RunningGateway } from "../../src/gateway.js";
import { SERVER_CAPABILITIES, SERVER_INSTRUCTIONS, TOOLS } from "../../src/mcp/server.js";
import { testConfig } from "../support/gateway.js";

type Tenant = { tenantId: string; userId: string; apiKey: string };

let core: CoreServices;
let gateway: RunningGateway;
let tenant: Tenant;

beforeAll(async () => {
  core = await startCoreServices({ label: "sdk-v1-interop" });
  const peers = { memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk };
  gateway = await startGateway(testConfig(peers));
  tenant = await core.createTenant("sdk v1 interop");
});

afterAll(async () => {
  await gateway?.close();
  await core?.close();
});

interface V1ToolResult {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
}

async function connectWithKey(apiKey: string): Promise<Client> {
  const client = new Client({ name: "sdk-v1-interop", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${apiKey}` } } }));
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<V1ToolResult> {
  return (await client.callTool({ name, arguments: args })) as V1ToolResult;
}

function structured(result: V1ToolResult): Record<string, unknown> {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  expect(JSON.parse(result.content[0]?.text ?? "null")).toEqual(result.structuredContent);
  return result.structuredContent!;
}

describe("the legacy official SDK (1.x) with an API key", () => {
  let client: Client;
  const marker = `v1${randomUUID().slice(0, 8)}`;
  let id = "";

  beforeAll(async () => {
    client = await connectWithKey(tenant.apiKey);
  });
  afterAll(async () => {
    await client?.close();
  });

  it("connects on the 2025 initialize path and reads the instructions and capabilities", () => {
    expect(client.getServerVersion()).toMatchObject({ name: "3ngram" });
    expect(client.getInstructions()).toBe(SERVER_INSTRUCTIONS);
    expect(client.getServerCapabilities()).toEqual({ ...SERVER_CAPABILITIES, completions: {} });
  });

  it("lists every tool with a flat input schema, and the prompts and resource template", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    for (const tool of tools) expect(tool.inputSchema, tool.name).toMatchObject({ type: "object", additionalProperties: false });
    expect((await client.listPrompts()).prompts.map((p) => p.name).sort()).toEqual(["briefing", "debrief"]);
    expect((await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual(["threengram://memory/{id}"]);
  });

  it("calls a write tool and read tools, their structured results passing its own output-schema validation", async () => {
    const written = rememberOutputSchema.parse(
      structured(
        await call(client, "remember", {
          memoryType: "decision",
          topic: `v1 client ${marker}`,
          content: `Legacy clients keep working ${marker}.`,
          scope: "interop",
        }),
      ),
    );
    id = written.memory.id;
    const found = searchOutputSchema.parse(structured(await call(client, "search", { query: `legacy clients ${marker}` })));
    expect(found.hits.map((h) => h.id)).toContain(id);
    const read = getMemoriesOutputSchema.parse(structured(await call(client, "get_memories", { ids: [id] })));
    expect(read.memories[0]).toMatchObject({ id, content: `Legacy clients keep working ${marker}.` });
    const scopes = structured(await call(client, "configure_scope", { action: "list" }));
    expect(scopes).toMatchObject({ action: "list" });
  });

  it("gets refused arguments as an isError result it can hand to the model", async () => {
    const refused = await call(client, "configure_scope", { action: "rename", name: "interop" });
    expect(refused).toMatchObject({ isError: true, content: [{ type: "text", text: 'invalid_input: newName: required with action "rename"' }] });
  });

  it("reads the memory resource, gets a prompt and completes its argument", async () => {
    const { contents } = await client.readResource({ uri: `threengram://memory/${id}` });
    expect(memoryResourceSchema.parse(JSON.parse((contents[0] as { text: string }).text))).toMatchObject({ id, scope: "interop" });
    const prompt = await client.getPrompt({ name: "debrief", arguments: { scope: "interop" } });
    expect((prompt.messages[0]?.content as { text: string }).text).toContain('scope "interop"');
    const { completion } = await client.complete({ ref: { type: "ref/prompt", name: "debrief" }, argument: { name: "scope", value: "inter" } });
    expect(completion.values).toEqual(["interop"]);
  });
});

describe("the legacy official SDK's OAuth flow, auth() included", () => {
  it("discovers from the 401, registers, authorizes with PKCE, calls tools on the token and refreshes it", async () => {
    const host = new ConsentingHost(gateway.url, tenant.apiKey);
    const mcpUrl = new URL(`${gateway.url}/mcp`);

    // No credentials: the transport meets the 401, follows its resource_metadata to the
    // authorization server, registers, and sends the "browser" to the consent page.
    const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: host });
    await expect(new Client({ name: "v1-oauth", version: "1.0.0" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(host.redirects).toBe(1);
    expect(host.information?.client_id).toBeTruthy();
    const code = host.callback?.get("code");
    expect(code).toBeTruthy();
    expect(host.callback?.get("iss")).toBe(gateway.url);

    // The code exchange, through auth() itself (what finishAuth calls), with the PKCE verifier it saved.
    expect(await auth(host, { serverUrl: mcpUrl, authorizationCode: code! })).toBe("AUTHORIZED");
    const issued = host.saved!;
    expect(issued).toMatchObject({ token_type: "Bearer", scope: "memory:read memory:write" });
    expect(issued.refresh_token).toBeTruthy();

    const client = new Client({ name: "v1-oauth", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: host }));
    try {
      structured(await call(client, "remember", { memoryType: "note", topic: "oauth v1", content: `Stored through an OAuth token ${randomUUID()}.` }));
      expect((await client.listTools()).tools).toHaveLength(TOOLS.length);
    } finally {
      await client.close();
    }

    // With tokens saved, auth() refreshes: a new pair, the old refresh token spent (rotation).
    expect(await auth(host, { serverUrl: mcpUrl })).toBe("AUTHORIZED");
    const refreshed = host.saved!;
    expect(refreshed.access_token).not.toBe(issued.access_token);
    expect(refreshed.refresh_token).not.toBe(issued.refresh_token);
    const reused = await tokenRequest(gateway.url, {
      grant_type: "refresh_token",
      refresh_token: issued.refresh_token!,
      client_id: host.information!.client_id,
    });
    expect(reused).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    const again = new Client({ name: "v1-oauth", version: "1.0.0" });
    await again.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: host }));
    try {
      expect(structured(await call(again, "describe_environment", {}))).toHaveProperty("capabilities");
    } finally {
      await again.close();
    }
    expect(host.redirects).toBe(1);
  });
});
