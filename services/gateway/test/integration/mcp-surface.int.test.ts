/**
 * The MCP surface as a whole, with the official client against a real gateway on the real memory
 * and search services: every protocol version the gateway serves, the instructions, prompts,
 * resource template and completion, cache hints per era, isError results for arguments that do not parse,
 * the header telemetry, the schema-openness invariant and the worst-case response size.
 */
import { randomUUID } from "node:crypto";
import { createTenantWithKey } from "@3ngram/memory";
import { SCOPES } from "@3ngram/rpc";
import { createLogger } from "@3ngram/runtime";
import {
  MAX_GET_CONTENT_CHARS,
  MAX_GET_MEMORIES_IDS,
  MAX_GET_MEMORIES_WIRE_BYTES,
  MAX_GET_TOTAL_CHARS,
  MAX_PROJECT_LENGTH,
  MAX_SCOPE_LENGTH,
  MAX_TAG_LENGTH,
  MAX_TAGS,
  MAX_TOPIC_LENGTH,
  getMemoriesOutputSchema,
  importOutputSchema,
  memoryResourceSchema,
  rememberOutputSchema,
} from "@3ngram/schema";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { startGateway, type RunningGateway } from "../../src/gateway.js";
import { CATALOG_CACHE_TTL_MS, MEMORY_RESOURCE_CACHE_TTL_MS } from "../../src/mcp/cache.js";
import { MEMORY_RESOURCE_TEMPLATE } from "../../src/mcp/catalog.js";
import { SERVER_INSTRUCTIONS, TOOLS } from "../../src/mcp/server.js";
import { testConfig, type GatewayPeers } from "../support/gateway.js";
import {
  ERAS,
  PROTOCOL_MATRIX,
  callTool,
  connect,
  connectRecorded,
  errorText,
  invalidArguments,
  invalidParams,
  rpcResults,
  structured,
  type RecordedClient,
  type WireExchange,
} from "../support/mcp-client.js";

type Tenant = { tenantId: string; userId: string; apiKey: string };

let core: CoreServices;
let peers: GatewayPeers;
let gateway: RunningGateway;
let owner: Tenant;
let other: Tenant;
let readOnly: string;
let writeOnly: string;

const log = createLogger({ service: "gateway", level: process.env.TEST_LOG_LEVEL ?? "silent" });
const mcpHeaders = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };

beforeAll(async () => {
  core = await startCoreServices({ label: "gateway-mcp-surface" });
  peers = { memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk };
  gateway = await startGateway(testConfig(peers), { log });
  owner = await core.createTenant("surface owner");
  other = await core.createTenant("surface other");
  readOnly = (await createTenantWithKey(core.ownerPool, { tenantName: "surface read-only", scopes: [SCOPES.read] })).apiKey;
  writeOnly = (await createTenantWithKey(core.ownerPool, { tenantName: "surface write-only", scopes: [SCOPES.write] })).apiKey;
});

afterAll(async () => {
  await gateway?.close();
  await core?.close();
});

async function metricsText(target: RunningGateway = gateway): Promise<string> {
  return (await fetch(`${target.url}/metrics`)).text();
}

function exchangesFor(wire: readonly WireExchange[], method: string): WireExchange[] {
  return wire.filter((x) => x.method === method);
}

const CACHEABLE_CATALOG = ["server/discover", "tools/list", "prompts/list", "resources/templates/list", "resources/list"] as const;

describe.each(PROTOCOL_MATRIX)("protocol $name", (version) => {
  let rec: RecordedClient;
  let client: Client;
  const scope = `proto-${version.expectedVersion.replaceAll("-", "")}`;
  const marker = randomUUID();
  let memoryId = "";

  beforeAll(async () => {
    rec = await connectRecorded(gateway.url, owner.apiKey, version);
    client = rec.client;
  });
  afterAll(async () => {
    await client?.close();
  });

  it("negotiates the version and advertises the instructions built from the jobs table", () => {
    expect(client.getNegotiatedProtocolVersion()).toBe(version.expectedVersion);
    expect(client.getInstructions()).toBe(SERVER_INSTRUCTIONS);
  });

  it("lists the tools, prompts and the resource template; resources/list names no memory", async () => {
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(["briefing", "debrief"]);
    const debrief = prompts.find((p) => p.name === "debrief");
    expect(debrief?.arguments).toEqual([expect.objectContaining({ name: "scope", required: false })]);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates).toEqual([expect.objectContaining({ name: "memory", uriTemplate: MEMORY_RESOURCE_TEMPLATE, mimeType: "application/json" })]);
    expect((await client.listResources()).resources).toEqual([]);
  });

  it("writes with remember and reads with get_memories, each result carrying structuredContent and its JSON text mirror", async () => {
    const written = rememberOutputSchema.parse(
      structured(
        await callTool(client, "remember", {
          memoryType: "decision",
          topic: `protocol ${version.expectedVersion}`,
          content: `Decided ${marker}.`,
          scope,
          project: "matrix",
        }),
      ),
    );
    memoryId = written.memory.id;
    const read = getMemoriesOutputSchema.parse(structured(await callTool(client, "get_memories", { ids: [memoryId] })));
    expect(read.memories[0]).toMatchObject({ id: memoryId, content: `Decided ${marker}.`, scope, project: "matrix" });
    // On the wire too: the text mirror is what a client without structuredContent support reads.
    const answers = exchangesFor(rec.wire, "tools/call").flatMap(rpcResults);
    expect(answers).toHaveLength(2);
    for (const result of answers) {
      const content = result.content as { type: string; text: string }[];
      expect(JSON.parse(content[0]!.text)).toEqual(result.structuredContent);
    }
  });

  it("reads the memory resource: the immutable projection with the full content", async () => {
    const uri = `threengram://memory/${memoryId}`;
    const { contents } = await client.readResource({ uri });
    expect(contents).toHaveLength(1);
    const [body] = contents as { uri: string; mimeType?: string; text?: string }[];
    expect(body).toMatchObject({ uri, mimeType: "application/json" });
    const parsed = memoryResourceSchema.parse(JSON.parse(body!.text ?? ""));
    expect(Object.keys(parsed).sort()).toEqual(["content", "contentLength", "id", "memoryType", "project", "recordedAt", "scope", "topic"]);
    expect(parsed).toMatchObject({ id: memoryId, memoryType: "decision", content: `Decided ${marker}.`, scope, project: "matrix" });
  });

  it("completes debrief.scope from the tenant's live scopes", async () => {
    const { completion } = await client.complete({
      ref: { type: "ref/prompt", name: "debrief" },
      argument: { name: "scope", value: scope.slice(0, 8).toUpperCase() },
    });
    expect(completion.values).toContain(scope);
    expect(completion.values.every((v) => v.startsWith("proto-"))).toBe(true);
  });

  it("renders both prompts as one user message naming the tools to call", async () => {
    const briefing = await client.getPrompt({ name: "briefing", arguments: { selector: "scope", mode: "full" } });
    const briefingText = (briefing.messages[0]?.content as { text: string }).text;
    expect(briefing.messages).toHaveLength(1);
    expect(briefingText).toContain('{"selector":{"kind":"scope","scope":"<your-scope>"},"mode":"full"}');
    const debrief = await client.getPrompt({ name: "debrief", arguments: { scope } });
    const debriefText = (debrief.messages[0]?.content as { text: string }).text;
    expect(debriefText).toContain(`scope "${scope}"`);
    expect(debriefText).toMatch(/\bremember\b/);
    await invalidParams(client.getPrompt({ name: "briefing", arguments: { selector: "everything" } }));
  });

  it("answers arguments that do not parse with an isError result naming every field (SEP-1303), an unknown tool with -32602", async () => {
    const result = await callTool(client, "search", { query: "q", lmit: 3 });
    expect(result).toMatchObject({ isError: true, content: [{ type: "text", text: "invalid_input: lmit: unrecognized key" }] });
    expect(result.structuredContent).toBeUndefined();
    const { message } = await invalidArguments(callTool(client, "remember", { memoryType: "idea", topic: "", bogus: 1 }));
    expect(message).toMatch(/^invalid_input: memoryType: .*; topic: .*; content: .*; bogus: unrecognized key$/);
    expect((await invalidParams(callTool(client, "no_such_tool", {}))).message).toMatch(/no_such_tool/);
  });

  if (version.modern) {
    it("carries cache hints: the catalog public for an hour, a memory body private for a day", () => {
      for (const method of CACHEABLE_CATALOG) {
        const results = exchangesFor(rec.wire, method).flatMap(rpcResults);
        expect(results.length, method).toBeGreaterThan(0);
        for (const result of results) expect(result, method).toMatchObject({ ttlMs: CATALOG_CACHE_TTL_MS, cacheScope: "public" });
      }
      const reads = exchangesFor(rec.wire, "resources/read").flatMap(rpcResults);
      expect(reads).toHaveLength(1);
      expect(reads[0]).toMatchObject({ ttlMs: MEMORY_RESOURCE_CACHE_TTL_MS, cacheScope: "private" });
      // Calls are never cacheable.
      for (const result of exchangesFor(rec.wire, "tools/call").flatMap(rpcResults)) expect(result).not.toHaveProperty("ttlMs");
    });
  } else {
    it("carries no cache hints (the fields do not exist before 2026-07-28) and no server/discover", () => {
      expect(exchangesFor(rec.wire, "server/discover")).toEqual([]);
      const results = rec.wire.flatMap(rpcResults);
      expect(results.length).toBeGreaterThan(8);
      for (const result of results) {
        expect(result).not.toHaveProperty("ttlMs");
        expect(result).not.toHaveProperty("cacheScope");
      }
    });
  }
});

describe("raw 2025-era requests", () => {
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${gateway.url}/mcp`, {
      method: "POST",
      headers: { ...mcpHeaders, Authorization: `Bearer ${owner.apiKey}`, ...headers },
      body: JSON.stringify(body),
    });

  it("initialize echoes each supported version and answers anything else with the latest 2025 revision", async () => {
    for (const requested of ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07", "2023-01-01"]) {
      const res = await post({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: requested, capabilities: {}, clientInfo: { name: "curl", version: "0" } },
      });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text, requested).toContain(`"protocolVersion":"${requested === "2023-01-01" ? "2025-11-25" : requested}"`);
    }
  });

  it("serves a request that names no protocol version (the SDK assumes 2025-03-26)", async () => {
    const res = await post({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
    expect(res.status).toBe(200);
    const [result] = rpcResults({
      method: "tools/list",
      status: res.status,
      contentType: res.headers.get("content-type") ?? "",
      body: await res.text(),
      bytes: 0,
    });
    expect((result?.tools as unknown[]).length).toBe(TOOLS.length);
  });
});

describe("a cached catalog never stands in for authentication", () => {
  it("serves tools/list from the client cache, but tools/call, resources/read and completion are refused with a bad key", async () => {
    const rec = await connectRecorded(gateway.url, owner.apiKey, PROTOCOL_MATRIX[0]!);
    try {
      const first = await rec.client.listTools();
      const exchanges = rec.wire.length;
      rec.setKey("3ng_not_a_real_key");
      // Fresh within the one-hour TTL: no request goes out.
      expect((await rec.client.listTools()).tools).toEqual(first.tools);
      expect(rec.wire).toHaveLength(exchanges);

      await expect(callTool(rec.client, "search", { query: "anything" })).rejects.toThrow();
      await expect(rec.client.readResource({ uri: `threengram://memory/${randomUUID()}` })).rejects.toThrow();
      await expect(rec.client.complete({ ref: { type: "ref/prompt", name: "debrief" }, argument: { name: "scope", value: "" } })).rejects.toThrow();
      const refused = rec.wire.slice(exchanges);
      expect(refused.map((x) => [x.method, x.status])).toEqual([
        ["tools/call", 401],
        ["resources/read", 401],
        ["completion/complete", 401],
      ]);

      // A valid key without the scope still meets the scope gate, cached definitions or not.
      rec.setKey(readOnly);
      expect(errorText(await callTool(rec.client, "remember", { memoryType: "note", topic: "t", content: "never stored" }))).toBe(
        "insufficient_scope: memory:write required",
      );
    } finally {
      await rec.client.close();
    }
  });
});

describe("the memory resource's guards", () => {
  let id = "";
  let modern: Client;

  beforeAll(async () => {
    modern = await connect(gateway.url, owner.apiKey, ERAS[1]);
    id = rememberOutputSchema.parse(
      structured(await callTool(modern, "remember", { memoryType: "note", topic: "guarded", content: `Guarded ${randomUUID()}` })),
    ).memory.id;
  });
  afterAll(async () => {
    await modern?.close();
  });

  it("answers another tenant's id exactly like an unknown or malformed one", async () => {
    const stranger = await connect(gateway.url, other.apiKey, ERAS[1]);
    try {
      const notFound = async (client: Client, uri: string) => {
        const { message, data } = await invalidParams(client.readResource({ uri }));
        return { message: message.replace(uri, "<uri>"), data: { ...data, uri: data?.uri === uri ? "<uri>" : data?.uri } };
      };
      const foreign = await notFound(stranger, `threengram://memory/${id}`);
      expect(foreign).toEqual(await notFound(stranger, `threengram://memory/${randomUUID()}`));
      expect(foreign).toEqual(await notFound(stranger, "threengram://memory/not-a-uuid"));
      expect(foreign).toEqual({ message: "Resource not found: <uri>", data: { uri: "<uri>" } });
    } finally {
      await stranger.close();
    }
  });

  it("never completes {id}: suggesting ids would enumerate the corpus", async () => {
    const { completion } = await modern.complete({
      ref: { type: "ref/resource", uri: MEMORY_RESOURCE_TEMPLATE },
      argument: { name: "id", value: id.slice(0, 4) },
    });
    expect(completion.values).toEqual([]);
  });

  it("needs memory:read", async () => {
    const client = await connect(gateway.url, writeOnly, ERAS[1]);
    try {
      const err = (await client.readResource({ uri: `threengram://memory/${id}` }).catch((e: unknown) => e)) as { code?: number; message?: string };
      expect(err).toMatchObject({ code: -32600, message: "insufficient_scope: memory:read required" });
    } finally {
      await client.close();
    }
  });

  it("serves the whole stored content of an imported memory, which get_memories bounds", async () => {
    const content = `${randomUUID()} ${"imported body ".repeat(20_000)}`.slice(0, 200_000).trim();
    const res = await fetch(`${gateway.url}/api/v1/import`, {
      method: "POST",
      headers: { Authorization: `Bearer ${owner.apiKey}`, "Content-Type": "application/x-ndjson" },
      body: JSON.stringify({ kind: "memory", key: "whole", memoryType: "note", topic: "long import", content }) + "\n",
    });
    expect(res.status).toBe(200);
    const imported = importOutputSchema.parse(await res.json()).results[0]!;
    expect(imported.outcome).toBe("created");
    const { contents } = await modern.readResource({ uri: `threengram://memory/${imported.id}` });
    const body = memoryResourceSchema.parse(JSON.parse((contents[0] as { text: string }).text));
    expect(body.content).toBe(content);
    expect(body.contentLength).toBe(content.length);
    const bounded = getMemoriesOutputSchema.parse(
      structured(await callTool(modern, "get_memories", { ids: [imported.id!], maxContentChars: MAX_GET_CONTENT_CHARS })),
    );
    expect(bounded.memories[0]).toMatchObject({ truncated: true, contentLength: content.length });
  });
});

describe("debrief.scope completion guards", () => {
  const complete = (client: Client, value: string) =>
    client.complete({ ref: { type: "ref/prompt", name: "debrief" }, argument: { name: "scope", value } }).then((r) => r.completion.values);

  it("completes to an empty list without memory:read, even though the tenant has scopes", async () => {
    const client = await connect(gateway.url, writeOnly, ERAS[1]);
    try {
      structured(await callTool(client, "remember", { memoryType: "note", topic: "w", content: `write only ${randomUUID()}`, scope: "hidden-scope" }));
      expect(await complete(client, "hid")).toEqual([]);
      expect(await metricsText()).toMatch(/threengram_gateway_mcp_completions_total\{outcome="denied"[^}]*\} [1-9]/);
    } finally {
      await client.close();
    }
  });

  it("never offers another tenant's scopes", async () => {
    const mine = await connect(gateway.url, owner.apiKey, ERAS[0]);
    const theirs = await connect(gateway.url, other.apiKey, ERAS[0]);
    try {
      structured(await callTool(mine, "remember", { memoryType: "note", topic: "s", content: `scoped ${randomUUID()}`, scope: "owner-only-scope" }));
      expect(await complete(mine, "owner-only")).toEqual(["owner-only-scope"]);
      expect(await complete(theirs, "owner-only")).toEqual([]);
    } finally {
      await Promise.all([mine.close(), theirs.close()]);
    }
  });

  it("is limited per user: past the limit a user completes to an empty list while another user is still served", async () => {
    const limited = await startGateway(testConfig(peers, { MCP_COMPLETIONS_PER_MINUTE: "2" }), { log });
    const first = await connect(limited.url, owner.apiKey, ERAS[1]);
    const second = await connect(limited.url, other.apiKey, ERAS[1]);
    try {
      structured(await callTool(second, "remember", { memoryType: "note", topic: "s", content: `other scoped ${randomUUID()}`, scope: "other-scope" }));
      expect(await complete(first, "owner-only")).toEqual(["owner-only-scope"]);
      expect(await complete(first, "owner-only")).toEqual(["owner-only-scope"]);
      expect(await complete(first, "owner-only")).toEqual([]);
      expect(await complete(second, "other")).toEqual(["other-scope"]);
      const text = await metricsText(limited);
      expect(text).toMatch(/threengram_gateway_mcp_completions_total\{outcome="rate_limited"[^}]*\} 1\n/);
      expect(text).toMatch(/threengram_gateway_mcp_completions_total\{outcome="ok"[^}]*\} 3\n/);
    } finally {
      await Promise.all([first.close(), second.close()]);
      await limited.close();
    }
  });
});

describe("Mcp-Method / Mcp-Name telemetry", () => {
  const post = (body: unknown, headers: Record<string, string>) =>
    fetch(`${gateway.url}/mcp`, {
      method: "POST",
      headers: { ...mcpHeaders, Authorization: `Bearer ${owner.apiKey}`, "mcp-protocol-version": "2025-06-18", ...headers },
      body: JSON.stringify(body),
    });

  it("labels modern calls by method and tool name", async () => {
    const client = await connect(gateway.url, owner.apiKey, ERAS[1]);
    try {
      structured(await callTool(client, "search", { query: "telemetry" }));
    } finally {
      await client.close();
    }
    const text = await metricsText();
    expect(text).toMatch(/threengram_gateway_mcp_requests_total\{method="server\/discover",name="none"[^}]*\} [1-9]/);
    expect(text).toMatch(/threengram_gateway_mcp_requests_total\{method="tools\/call",name="search"[^}]*\} [1-9]/);
  });

  it("reduces unknown values to other and a resource URI to its template, never a raw value", async () => {
    const id = randomUUID();
    const bogus = await post({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }, { "Mcp-Method": "evil/<script>", "Mcp-Name": "x".repeat(200) });
    expect(bogus.status).toBe(200);
    const unknownTool = await post({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }, { "Mcp-Method": "tools/call", "Mcp-Name": "not_a_tool" });
    expect(unknownTool.status).toBe(200);
    const resource = await post(
      { jsonrpc: "2.0", id: 3, method: "resources/read", params: { uri: `threengram://memory/${id}` } },
      { "Mcp-Method": "resources/read", "Mcp-Name": `threengram://memory/${id}` },
    );
    expect(resource.status).toBe(200);
    const text = await metricsText();
    expect(text).toMatch(/threengram_gateway_mcp_requests_total\{method="other",name="other"[^}]*\} [1-9]/);
    expect(text).toMatch(/threengram_gateway_mcp_requests_total\{method="tools\/call",name="other"[^}]*\} [1-9]/);
    expect(text).toMatch(/threengram_gateway_mcp_requests_total\{method="resources\/read",name="threengram:\/\/memory\/\{id\}"[^}]*\} [1-9]/);
    expect(text).not.toContain(id);
    expect(text).not.toContain("evil");
    expect(text).not.toContain("not_a_tool");
  });
});

type Json = Record<string, unknown>;

/** Every object-typed node of a JSON Schema, at any depth, through properties, items and combinators. */
function objectNodes(schema: unknown, path = "$"): { path: string; node: Json }[] {
  if (schema === null || typeof schema !== "object") return [];
  if (Array.isArray(schema)) return schema.flatMap((s, i) => objectNodes(s, `${path}[${i}]`));
  const node = schema as Json;
  const isObject = node.type === "object" || (Array.isArray(node.type) && node.type.includes("object")) || "properties" in node;
  const found = isObject ? [{ path, node }] : [];
  for (const [key, value] of Object.entries(node)) {
    if (key === "properties" && value && typeof value === "object") {
      for (const [prop, sub] of Object.entries(value as Json)) found.push(...objectNodes(sub, `${path}.${prop}`));
    } else if (["items", "prefixItems", "anyOf", "oneOf", "allOf", "not", "if", "then", "else", "$defs", "definitions", "additionalProperties"].includes(key)) {
      found.push(...objectNodes(value, `${path}/${key}`));
    }
  }
  return found;
}

describe("the advertised schemas", () => {
  it("close every input object and open every output object, at every depth, in every tool", async () => {
    const client = await connect(gateway.url, owner.apiKey, ERAS[1]);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
      const problems: string[] = [];
      for (const tool of tools) {
        const inputs = objectNodes(tool.inputSchema);
        expect(inputs.length, tool.name).toBeGreaterThan(0);
        for (const { path, node } of inputs) {
          // A node that only combines closed variants (configure_scope's root) declares no keys itself.
          const onlyCombines = !("properties" in node) && ("oneOf" in node || "anyOf" in node);
          if (!onlyCombines && node.additionalProperties !== false) problems.push(`${tool.name} input ${path}`);
        }
        const outputs = objectNodes(tool.outputSchema);
        expect(outputs.length, tool.name).toBeGreaterThan(0);
        for (const { path, node } of outputs) if (node.additionalProperties !== true) problems.push(`${tool.name} output ${path}`);
      }
      expect(problems).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("reject an unknown input key in every tool (the schema the SDK advertises is the one enforced)", async () => {
    const client = await connect(gateway.url, owner.apiKey, ERAS[0]);
    try {
      for (const tool of TOOLS) {
        const { data } = await invalidArguments(callTool(client, tool.name, { unexpectedKey: true }));
        expect(data.fields, tool.name).toContain("unexpectedKey");
        // The first problem named is the unknown key itself, or a required key the call lacked.
        expect(typeof data?.field, tool.name).toBe("string");
      }
      // With otherwise valid arguments, the unknown key is what is named.
      const { data } = await invalidArguments(callTool(client, "get_memories", { ids: [randomUUID()], unexpectedKey: 1 }));
      expect(data).toMatchObject({ field: "unexpectedKey" });
    } finally {
      await client.close();
    }
  });
});

describe("the worst-case get_memories response", () => {
  /** Prose with the quotes and line breaks real notes carry, which JSON escapes once and the text mirror again. */
  const prose = (n: number, salt: string) => {
    const sentence = `On ${salt} the team agreed to "ship the importer on Friday", pending review.\nFollow-up: owner confirms the rollout plan; no blockers.\n`;
    return sentence.repeat(Math.ceil(n / sentence.length) + 1).slice(0, n - 1) + ".";
  };
  const padded = (prefix: string, length: number) => (prefix + "-" + "x".repeat(length)).slice(0, length);

  async function importAtBound(count: number, chars: number): Promise<string[]> {
    const lines = Array.from({ length: count }, (_, i) => {
      const salt = `${count}x${chars}-${i}-${randomUUID()}`;
      return JSON.stringify({
        kind: "memory",
        key: salt,
        memoryType: "commitment",
        topic: padded(`topic ${salt}`, MAX_TOPIC_LENGTH),
        content: prose(chars, salt),
        scope: padded(`scope-${i}`, MAX_SCOPE_LENGTH),
        project: padded(`project ${salt}`, MAX_PROJECT_LENGTH),
        tags: Array.from({ length: MAX_TAGS }, (_, t) => padded(`tag${t}`, MAX_TAG_LENGTH)),
        commitment: { status: "open", owner: padded(`owner ${salt}`, 256), dueAt: "2030-01-01T00:00:00.000Z" },
      });
    });
    const res = await fetch(`${gateway.url}/api/v1/import`, {
      method: "POST",
      headers: { Authorization: `Bearer ${owner.apiKey}`, "Content-Type": "application/x-ndjson" },
      body: lines.join("\n") + "\n",
    });
    expect(res.status).toBe(200);
    const out = importOutputSchema.parse(await res.json());
    expect(out.created).toBe(count);
    return out.results.map((r) => r.id!);
  }

  it(`stays under MAX_GET_MEMORIES_WIRE_BYTES (${MAX_GET_MEMORIES_WIRE_BYTES}) in both eras at the aggregate bound`, async () => {
    // The two shapes of the bound: the most ids at an even share, or the largest per-item cap.
    const perItem = Math.floor(MAX_GET_TOTAL_CHARS / MAX_GET_MEMORIES_IDS);
    const shapes = [
      { ids: await importAtBound(MAX_GET_MEMORIES_IDS, perItem), maxContentChars: perItem },
      { ids: await importAtBound(MAX_GET_TOTAL_CHARS / MAX_GET_CONTENT_CHARS, MAX_GET_CONTENT_CHARS), maxContentChars: MAX_GET_CONTENT_CHARS },
    ];
    const measured: Record<string, number> = {};
    for (const era of [PROTOCOL_MATRIX[0]!, PROTOCOL_MATRIX[3]!]) {
      const rec = await connectRecorded(gateway.url, owner.apiKey, era);
      try {
        for (const shape of shapes) {
          const out = getMemoriesOutputSchema.parse(structured(await callTool(rec.client, "get_memories", shape)));
          expect(out.count).toBe(shape.ids.length);
          expect(out.memories.every((m) => !m.truncated && m.content.length === shape.maxContentChars)).toBe(true);
          expect(out.memories.reduce((sum, m) => sum + m.content.length, 0)).toBeGreaterThan(MAX_GET_TOTAL_CHARS - MAX_GET_MEMORIES_IDS);
          const answer = rec.wire.at(-1)!;
          expect(answer.method).toBe("tools/call");
          measured[`${era.expectedVersion} ${shape.ids.length}x${shape.maxContentChars}`] = answer.bytes;
        }
      } finally {
        await rec.client.close();
      }
    }
    console.log("get_memories at the aggregate bound, bytes on the wire:", JSON.stringify(measured));
    for (const [what, bytes] of Object.entries(measured)) {
      // Both copies are on the wire: structured, then the mirror (escaped once more).
      expect(bytes, what).toBeGreaterThan(2 * MAX_GET_TOTAL_CHARS);
      expect(bytes, what).toBeLessThanOrEqual(MAX_GET_MEMORIES_WIRE_BYTES);
    }
  });
});
