/**
 * What the shared contract does not cover, against the real memory and search services on a fresh
 * PostgreSQL database with real API keys: the identity the gateway calls the services with, how
 * tool input reaches a search, the API-key cache, failures crossing the gRPC hop (a search
 * service that stops, a memory service that is not there, a database that refuses a write),
 * transport edges, and log hygiene. Every gateway here logs into one sink, checked last.
 */
import { randomUUID } from "node:crypto";
import { HashingEmbedder } from "@3ngram/embeddings";
import { createTenantWithKey, type CreatedTenant } from "@3ngram/memory";
import { SCOPES } from "@3ngram/rpc";
import { createLogger } from "@3ngram/runtime";
import { rememberOutputSchema, searchOutputSchema } from "@3ngram/schema";
import { loadSearchConfig, startSearchService, type RunningSearchService } from "@3ngram/search";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { freePort } from "../../../../test/support/processes.js";
import type { RunningGateway } from "../../src/gateway.js";
import { startTestGateway, type GatewayPeers } from "../support/gateway.js";
import { ERAS, callTool, connect, errorText, structured } from "../support/mcp-client.js";
import { capturedLog } from "../support/captured-log.js";

type Key = { tenantId: string; userId: string; apiKey: string };

let core: CoreServices;
let gateway: RunningGateway;
let readWrite: Key;
let writeOnly: CreatedTenant;
const { log: gatewayLog, lines: logLines } = capturedLog();
const log = gatewayLog;
const silent = createLogger({ service: "test", level: process.env.TEST_LOG_LEVEL ?? "silent" });

const peers = (overrides: Partial<GatewayPeers> = {}): GatewayPeers => ({
  memoryAddr: core.memoryAddress,
  searchAddr: core.searchAddress,
  signingJwk: core.keys.signingJwk,
  ...overrides,
});

beforeAll(async () => {
  core = await startCoreServices({ label: "gateway-edges" });
  readWrite = await core.createTenant("edges read-write");
  writeOnly = await createTenantWithKey(core.ownerPool, { tenantName: "edges write-only", scopes: [SCOPES.write] });
  gateway = await startTestGateway(peers(), log);
});
afterAll(async () => {
  await gateway?.close();
  await core?.close();
});

const post = (path: string, json: unknown, key: string = readWrite.apiKey, base = gateway.url) =>
  fetch(`${base}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify(json),
  });

/** Who the memory service recorded as owner and author of a memory. */
async function ownerOf(memoryId: string): Promise<{ tenantId: string; createdBy: string } | undefined> {
  const { rows } = await core.ownerPool.query<{ tenantId: string; createdBy: string }>(
    `SELECT tenant_id AS "tenantId", created_by AS "createdBy" FROM memories WHERE id = $1`,
    [memoryId],
  );
  return rows[0];
}

describe.each(ERAS.slice(0, 2))("MCP, $name", (era) => {
  let client: Client;
  beforeAll(async () => {
    client = await connect(gateway.url, readWrite.apiKey, era);
  });
  afterAll(async () => {
    await client?.close();
  });

  it("calls the services with the key's tenant and user", async () => {
    const marker = `ident${randomUUID().slice(0, 8)}`;
    const stored = rememberOutputSchema.parse(
      structured(await callTool(client, "remember", { memoryType: "note", topic: `t ${marker}`, content: `c ${marker}` })),
    );
    expect(await ownerOf(stored.memory.id)).toEqual({ tenantId: readWrite.tenantId, createdBy: readWrite.userId });
    const found = searchOutputSchema.parse(structured(await callTool(client, "search", { query: marker })));
    expect(found.hits.map((h) => h.id)).toContain(stored.memory.id);
  });

  it("maps the tool input onto the search: type, project, scope and limit", async () => {
    const project = `atlas-${randomUUID().slice(0, 8)}`;
    const remember = async (memoryType: string, scope: string, proj: string) =>
      rememberOutputSchema.parse(
        structured(
          await callTool(client, "remember", { memoryType, scope, project: proj, topic: "db", content: `db ${memoryType} ${scope} ${proj} ${randomUUID()}` }),
        ),
      ).memory.id;
    const targets = [await remember("decision", "work", project), await remember("decision", "work", project)];
    // Each decoy differs from the filter in exactly one field.
    await remember("fact", "work", project);
    await remember("decision", "personal", project);
    await remember("decision", "work", `${project}-other`);

    const filters = { query: "db", memoryType: "decision", project, scope: "work" };
    const all = searchOutputSchema.parse(structured(await callTool(client, "search", { ...filters, limit: 7 })));
    expect(all.hits.map((h) => h.id).sort()).toEqual([...targets].sort());
    expect(all.hasMore).toBe(false);
    const one = searchOutputSchema.parse(structured(await callTool(client, "search", { ...filters, limit: 1 })));
    expect(one.hits).toHaveLength(1);
    expect(targets).toContain(one.hits[0]!.id);
    expect(one.hasMore).toBe(true);
  });

  it("refuses the read tools for a write-only key", async () => {
    const wo = await connect(gateway.url, writeOnly.apiKey, era);
    try {
      expect(errorText(await callTool(wo, "get_memories", { ids: ["0190c0de-0000-7000-8000-00000000dead"] }))).toBe("insufficient_scope: memory:read required");
      expect(errorText(await callTool(wo, "search", { query: "q" }))).toBe("insufficient_scope: memory:read required");
      structured(await callTool(wo, "remember", { memoryType: "note", topic: "t", content: `write-only ${randomUUID()}` }));
    } finally {
      await wo.close();
    }
  });
});

describe("REST", () => {
  it("calls the memory service with the key's tenant and user", async () => {
    const res = await post("/api/v1/memories", { memoryType: "note", topic: "t", content: `rest identity ${randomUUID()}` });
    expect(res.status).toBe(201);
    const { memory } = rememberOutputSchema.parse(await res.json());
    expect(await ownerOf(memory.id)).toEqual({ tenantId: readWrite.tenantId, createdBy: readWrite.userId });
  });

  it("refuses reads for a write-only key with 403", async () => {
    const stored = await post("/api/v1/memories", { memoryType: "note", topic: "t", content: `rest write-only ${randomUUID()}` }, writeOnly.apiKey);
    expect(stored.status).toBe(201);
    const { memory } = rememberOutputSchema.parse(await stored.json());
    const read = await fetch(`${gateway.url}/api/v1/memories/${memory.id}`, { headers: { Authorization: `Bearer ${writeOnly.apiKey}` } });
    expect(read.status).toBe(403);
    expect(await read.json()).toMatchObject({ error: "insufficient_scope", detail: "memory:read required" });
    const search = await post("/api/v1/search", { query: "q" }, writeOnly.apiKey);
    expect(search.status).toBe(403);
  });
});

describe("API key cache", () => {
  it("resolves a key once and serves it from the cache, so a revoked key works until the entry expires", async () => {
    const key = await createTenantWithKey(core.ownerPool, { tenantName: "edges cache" });
    const client = await connect(gateway.url, key.apiKey, ERAS[1]);
    try {
      await client.listTools();
      await core.ownerPool.query("UPDATE api_keys SET revoked_at = now() WHERE id = $1", [key.keyId]);

      // The memory service no longer resolves it: a gateway that has not cached it refuses it.
      const fresh = await startTestGateway(peers(), log);
      try {
        const refused = await post("/api/v1/search", { query: "q" }, key.apiKey, fresh.url);
        expect(refused.status).toBe(401);
      } finally {
        await fresh.close();
      }

      // This gateway resolved it before the revocation, and answers from its cache.
      structured(await callTool(client, "search", { query: "q" }));
      expect((await post("/api/v1/search", { query: "q" }, key.apiKey)).status).toBe(200);
    } finally {
      await client.close();
    }
  });
});

describe("a search service that stops", () => {
  let search: RunningSearchService;
  let stopped = false;
  let gw: RunningGateway;
  let client: Client;
  beforeAll(async () => {
    // Its own search instance on the same database, so stopping it leaves the shared one running.
    const config = loadSearchConfig({
      DATABASE_URL: core.db.url,
      SERVICE_TRUSTED_JWKS: core.keys.trustedJwks,
      GRPC_HOST: "127.0.0.1",
      GRPC_PORT: "0",
      METRICS_PORT: "0",
      EMBEDDINGS_PROVIDER: "hashing",
      LOG_LEVEL: "silent",
    });
    search = await startSearchService(config, { embedder: new HashingEmbedder({ dimensions: 512 }), log: silent });
    gw = await startTestGateway(peers({ searchAddr: search.address }), log);
    client = await connect(gw.url, readWrite.apiKey, ERAS[1]);
  });
  afterAll(async () => {
    await client?.close();
    await gw?.close();
    if (!stopped) await search?.close();
  });

  it("is ready and answers while search is up", async () => {
    const ready = await fetch(`${gw.url}/ready`);
    expect(ready.status).toBe(200);
    structured(await callTool(client, "search", { query: "q" }));
    expect((await post("/api/v1/search", { query: "q" }, readWrite.apiKey, gw.url)).status).toBe(200);
  });

  it("once it stops: search is unavailable on MCP and REST (503, Retry-After), /ready names it, memory tools still work", async () => {
    await search.close();
    stopped = true;

    expect(errorText(await callTool(client, "search", { query: "q" }))).toBe("unavailable: search service unavailable, retry later");
    const res = await post("/api/v1/search", { query: "q" }, readWrite.apiKey, gw.url);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toMatchObject({ error: "unavailable" });

    const ready = await fetch(`${gw.url}/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: "not_ready", notServing: ["search"], peers: { memory: "SERVING" } });

    structured(await callTool(client, "remember", { memoryType: "note", topic: "t", content: `while search is down ${randomUUID()}` }));
  });
});

describe("an unreachable memory service", () => {
  let lonely: RunningGateway;
  beforeAll(async () => {
    // A port nothing listens on: every call fails fast with UNAVAILABLE.
    lonely = await startTestGateway(peers({ memoryAddr: `127.0.0.1:${await freePort()}` }), log);
  });
  afterAll(async () => {
    await lonely?.close();
  });

  it("authentication answers 503 on REST and on /mcp", async () => {
    for (const [path, body] of [
      ["/api/v1/search", { query: "q" }],
      [
        "/mcp",
        { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } },
      ],
    ] as const) {
      const res = await fetch(`${lonely.url}${path}`, {
        method: "POST",
        headers: { Authorization: `Bearer ${readWrite.apiKey}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify(body),
      });
      expect(res.status, path).toBe(503);
      expect(res.headers.get("retry-after")).toBe("1");
      expect(await res.json()).toMatchObject({ error: "unavailable" });
    }
  });

  it("/ready names memory", async () => {
    const res = await fetch(`${lonely.url}/ready`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ notServing: ["memory"], peers: { search: "SERVING" } });
  });
});

describe("a database that refuses the memory service's write", () => {
  it("reaches the caller as internal_error with only the request id, on MCP and REST, and leaves nothing behind", async () => {
    const content = `refused write ${randomUUID()}`;
    const client = await connect(gateway.url, readWrite.apiKey, ERAS[1]);
    try {
      // A real failure inside the memory service: its role loses the right to append audit events,
      // so the insert's transaction fails (the database's message names the table).
      await core.ownerPool.query("REVOKE INSERT ON memory_events FROM threengram_app");
      try {
        const text = errorText(await callTool(client, "remember", { memoryType: "note", topic: "t", content }));
        expect(text).toMatch(/^internal_error: request [0-9a-f-]{36}$/);

        const res = await post("/api/v1/memories", { memoryType: "note", topic: "t", content });
        expect(res.status).toBe(500);
        const body = await res.json();
        expect(body).toEqual({ error: "internal_error", request_id: res.headers.get("x-request-id") });
      } finally {
        await core.ownerPool.query("GRANT INSERT ON memory_events TO threengram_app");
      }
      // Both attempts rolled back: the same content is not a duplicate.
      structured(await callTool(client, "remember", { memoryType: "note", topic: "t", content }));
    } finally {
      await client.close();
    }
  });
});

describe("MCP transport edges", () => {
  const headers = () => ({ Authorization: `Bearer ${readWrite.apiKey}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" });

  it("malformed JSON gets a JSON-RPC parse error", async () => {
    const res = await fetch(`${gateway.url}/mcp`, { method: "POST", headers: headers(), body: '{"jsonrpc":' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32700 } });
  });

  it("an oversized body is refused with 413", async () => {
    const res = await fetch(`${gateway.url}/mcp`, { method: "POST", headers: headers(), body: JSON.stringify({ pad: "x".repeat(1_100_000) }) });
    expect(res.status).toBe(413);
  });
});

// Last, so its secret check also covers everything the gateways above logged (its own requests suffice for the rest).
describe("logs", () => {
  it("record method, route, status and duration but never content, queries or keys", async () => {
    const secrets = { content: `SECRET-CONTENT-${randomUUID()}`, topic: "SECRET-TOPIC-77aa", query: "SECRET-QUERY-0b9e" };
    const client = await connect(gateway.url, readWrite.apiKey, ERAS[1]);
    await callTool(client, "remember", { memoryType: "note", topic: secrets.topic, content: secrets.content });
    await callTool(client, "search", { query: secrets.query });
    // Arguments that do not parse are an isError result (logged with the count of problems only).
    expect(
      errorText(await callTool(client, "remember", { memoryType: "note", topic: secrets.topic, content: `${secrets.content}${"x".repeat(2001)}` })),
    ).toMatch(/^invalid_input: content: /);
    await client.close();
    expect((await post("/api/v1/memories", { memoryType: "note", topic: secrets.topic, content: `${secrets.content} via REST` })).status).toBe(201);
    expect((await post("/api/v1/memories", { memoryType: "note", topic: secrets.topic, content: `${secrets.content} via REST` })).status).toBe(409);
    await post("/api/v1/search", { query: secrets.query });
    await post("/api/v1/search", { query: secrets.query, bogus: secrets.content });
    await fetch(`${gateway.url}/api/v1/search`, { method: "POST", headers: { Authorization: "Bearer SECRET-KEY-1234" }, body: "{}" });

    const all = logLines.join("\n");
    for (const secret of [...Object.values(secrets), readWrite.apiKey, writeOnly.apiKey, "SECRET-KEY-1234"]) expect(all).not.toContain(secret);
    const requests = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === "request");
    expect(requests).toContainEqual(expect.objectContaining({ method: "POST", route: "POST /api/v1/memories", status: 201, ms: expect.any(Number) }));
    expect(requests).toContainEqual(expect.objectContaining({ method: "POST", route: "/mcp", status: 200 }));
  });
});
