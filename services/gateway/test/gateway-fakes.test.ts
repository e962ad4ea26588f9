/**
 * What only stand-in peers can show: the identity the gateway signs into each call, the API-key
 * cache, every failure reason crossing the gRPC hop, unreachable peers, and log hygiene.
 */
import { PassThrough } from "node:stream";
import { AppError } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import { createLogger } from "@3ngram/runtime";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunningGateway } from "../src/gateway.js";
import { KEYS, TENANT_A, startFakePeers, type FakePeers } from "./support/fake-peers.js";
import { startTestGateway } from "./support/gateway.js";
import { ERAS, callTool, connect, errorText } from "./support/mcp-client.js";

let peers: FakePeers;
let gateway: RunningGateway;
const logLines: string[] = [];

beforeAll(async () => {
  peers = await startFakePeers();
  const sink = new PassThrough();
  sink.on("data", (chunk: Buffer) => logLines.push(...chunk.toString("utf8").split("\n").filter(Boolean)));
  gateway = await startTestGateway(peers, { log: createLogger({ service: "gateway", level: "debug", destination: sink }) });
});
afterAll(async () => {
  await gateway?.close();
  await peers?.close();
});
afterEach(() => peers.reset());

const post = (path: string, json: unknown, key: string = KEYS.readWrite) =>
  fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify(json),
  });

describe.each(ERAS.slice(0, 2))("MCP, $name", (era) => {
  let client: Client;
  beforeAll(async () => {
    client = await connect(gateway.url, KEYS.readWrite, era);
  });
  afterAll(async () => {
    await client?.close();
  });

  it("calls the services with the key's tenant, user and scopes", async () => {
    await callTool(client, "remember", { memoryType: "note", topic: "t", content: "c" });
    await callTool(client, "search", { query: "c" });
    const toolCalls = peers.calls.filter((c) => c.rpc !== "resolveApiKey");
    expect(toolCalls.map((c) => c.rpc)).toEqual(["remember", "search"]);
    for (const call of toolCalls) expect(call.caller).toEqual({ tenantId: TENANT_A, userId: "user-a", scopes: [SCOPES.read, SCOPES.write] });
  });

  it("maps the tool input onto the wire request", async () => {
    await callTool(client, "search", { query: "db", memoryType: "decision", project: "atlas", scope: "work", limit: 7 });
    const request = peers.calls.find((c) => c.rpc === "search")?.request as Record<string, unknown>;
    expect(request).toMatchObject({ query: "db", limit: 7, memoryTypes: ["decision"], projects: ["atlas"], scope: "work" });
  });

  it.each([
    ["unavailable", new AppError("unavailable", "search is draining"), "unavailable: search is draining, retry later"],
    ["rate_limited", new AppError("rate_limited", "too many searches"), "rate_limited: too many searches"],
    ["invalid_input", new AppError("invalid_input", "scope: unknown scope alias", { field: "scope" }), "invalid_input: scope: unknown scope alias"],
  ])("a %s failure from search becomes an error result", async (_name, failure, text) => {
    peers.failWith.set("search", failure);
    expect(errorText(await callTool(client, "search", { query: "q" }))).toBe(text);
  });

  it("our own failures carry only the request id", async () => {
    peers.failWith.set("remember", new AppError("internal_error", "relation memories does not exist"));
    const text = errorText(await callTool(client, "remember", { memoryType: "note", topic: "t", content: "c" }));
    expect(text).toMatch(/^internal_error: request [0-9a-f-]{36}$/);
  });

  it("a read-only tool refused for a write-only key", async () => {
    const wo = await connect(gateway.url, KEYS.writeOnly, era);
    expect(errorText(await callTool(wo, "get_memories", { ids: ["0190c0de-0000-7000-8000-00000000dead"] }))).toBe("insufficient_scope: memory:read required");
    expect(peers.calls.filter((c) => c.rpc === "getMemories")).toHaveLength(0);
    await wo.close();
  });
});

describe("API key cache", () => {
  it("resolves a key once across many requests", async () => {
    const before = peers.resolveCount();
    const client = await connect(gateway.url, KEYS.readOnly, ERAS[1]);
    await client.listTools();
    await callTool(client, "search", { query: "q" });
    await post("/api/v1/search", { query: "q" }, KEYS.readOnly);
    await client.close();
    // The read-only key may already be cached by an earlier test; it is never resolved twice.
    expect(peers.resolveCount() - before).toBeLessThanOrEqual(1);
    expect(peers.calls.filter((c) => c.rpc === "resolveApiKey").every((c) => c.caller.tenantId === undefined && c.caller.scopes.join() === SCOPES.internalAuth)).toBe(true);
  });
});

describe("REST failures across the hop", () => {
  it("unavailable is 503 with Retry-After", async () => {
    peers.failWith.set("search", new AppError("unavailable", "search is draining"));
    const res = await post("/api/v1/search", { query: "q" });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toMatchObject({ error: "unavailable" });
  });

  it("duplicate_memory is 409 with the existing id", async () => {
    peers.failWith.set("remember", new AppError("duplicate_memory", "an identical live memory exists", { ids: { existing: "0190c0de-0000-7000-8000-000000000001" } }));
    const res = await post("/api/v1/memories", { memoryType: "note", topic: "t", content: "c" });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ error: "duplicate_memory", ids: { existing: "0190c0de-0000-7000-8000-000000000001" } });
  });

  it("internal errors are 500 without detail", async () => {
    peers.failWith.set("remember", new AppError("internal_error", "relation memories does not exist"));
    const res = await post("/api/v1/memories", { memoryType: "note", topic: "t", content: "c" });
    expect(res.status).toBe(500);
    const body = await res.json();
    expect(body).toEqual({ error: "internal_error", request_id: res.headers.get("x-request-id") });
  });
});

describe("MCP transport edges", () => {
  const headers = { Authorization: `Bearer ${KEYS.readWrite}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" };

  it("malformed JSON gets a JSON-RPC parse error", async () => {
    const res = await fetch(`${gateway.url}/mcp`, { method: "POST", headers, body: '{"jsonrpc":' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32700 } });
  });

  it("an oversized body is refused with 413", async () => {
    const res = await fetch(`${gateway.url}/mcp`, { method: "POST", headers, body: JSON.stringify({ pad: "x".repeat(1_100_000) }) });
    expect(res.status).toBe(413);
  });
});

describe("readiness", () => {
  it("names the peer that is not serving", async () => {
    peers.setServing({ memory: true, search: false });
    try {
      const res = await fetch(`${gateway.url}/ready`);
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ status: "not_ready", notServing: ["search"] });
    } finally {
      peers.setServing({ memory: true, search: true });
    }
  });
});

describe("unreachable memory service", () => {
  let lonely: RunningGateway;
  beforeAll(async () => {
    // Nothing listens on port 1, so every call fails fast with UNAVAILABLE.
    lonely = await startTestGateway({ ...peers, memoryAddr: "127.0.0.1:1" });
  });
  afterAll(async () => {
    await lonely?.close();
  });

  it("authentication answers 503 on REST and on /mcp", async () => {
    for (const [path, body] of [
      ["/api/v1/search", { query: "q" }],
      ["/mcp", { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } }],
    ] as const) {
      const res = await fetch(`${lonely.url}${path}`, {
        method: "POST",
        headers: { Authorization: `Bearer ${KEYS.readWrite}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
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
    expect(await res.json()).toMatchObject({ notServing: ["memory"] });
  });
});

describe("logs", () => {
  it("record method, route, status and duration but never content, queries or keys", async () => {
    const secrets = { content: "SECRET-CONTENT-5f1c", topic: "SECRET-TOPIC-77aa", query: "SECRET-QUERY-0b9e" };
    const client = await connect(gateway.url, KEYS.readWrite, ERAS[1]);
    await callTool(client, "remember", { memoryType: "note", topic: secrets.topic, content: secrets.content });
    await callTool(client, "search", { query: secrets.query });
    await callTool(client, "remember", { memoryType: "note", topic: secrets.topic, content: `${secrets.content}${"x".repeat(2001)}` });
    await client.close();
    await post("/api/v1/memories", { memoryType: "note", topic: secrets.topic, content: secrets.content });
    await post("/api/v1/search", { query: secrets.query });
    await post("/api/v1/search", { query: secrets.query, bogus: secrets.content });
    await fetch(`${gateway.url}/api/v1/search`, { method: "POST", headers: { Authorization: "Bearer SECRET-KEY-1234" }, body: "{}" });

    const all = logLines.join("\n");
    for (const secret of [...Object.values(secrets), KEYS.readWrite, "SECRET-KEY-1234"]) expect(all).not.toContain(secret);
    const requests = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === "request");
    expect(requests).toContainEqual(expect.objectContaining({ method: "POST", route: "POST /api/v1/memories", status: 201, ms: expect.any(Number) }));
    expect(requests).toContainEqual(expect.objectContaining({ method: "POST", route: "/mcp", status: 200 }));
  });
});
