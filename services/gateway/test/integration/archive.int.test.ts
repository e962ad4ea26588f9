/**
 * Import and export end to end: plain HTTP (they are REST only) and the official MCP client for
 * reading what an import stored, against a real gateway over the real memory and search services
 * on a fresh PostgreSQL database.
 */
import { randomUUID } from "node:crypto";
import { request as httpRequest } from "node:http";
import { createTenantWithKey } from "@3ngram/memory";
import { SCOPES } from "@3ngram/rpc";
import { MAX_IMPORT_BODY_BYTES, importOutputSchema, rememberOutputSchema, type ImportOutput } from "@3ngram/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { connectMcp, withMcp, type McpConnection } from "../../../../test/support/mcp.js";
import { MEM0_MEMORIES, MEM0_UNMAPPABLE } from "../../../../test/support/mem0-export.js";
import { BASIC_MEMORY_RECORDS, basicMemoryNotes } from "../../../../test/support/import-fixtures.js";
import type { RunningGateway } from "../../src/gateway.js";
import { startTestGateway } from "../support/gateway.js";

type Tenant = { tenantId: string; userId: string; apiKey: string };

let core: CoreServices;
let gateway: RunningGateway;

beforeAll(async () => {
  core = await startCoreServices({ label: "gateway-archive" });
  gateway = await startTestGateway({ memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk });
});
afterAll(async () => {
  await gateway?.close();
  await core?.close();
});

function rest(path: string, init: { method?: string; key: string; json?: unknown; body?: string; type?: string }): Promise<Response> {
  const headers: Record<string, string> = { Authorization: `Bearer ${init.key}` };
  let body = init.body;
  if (init.json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(init.json);
  } else if (init.type !== undefined) {
    headers["Content-Type"] = init.type;
  }
  return fetch(`${gateway.url}${path}`, { method: init.method ?? (body !== undefined ? "POST" : "GET"), headers, ...(body !== undefined ? { body } : {}) });
}

async function exportLines(key: string): Promise<string[]> {
  const res = await rest("/api/v1/export", { key });
  expect(res.status).toBe(200);
  const text = await res.text();
  expect(text.endsWith("\n")).toBe(true);
  return text.slice(0, -1).split("\n");
}

async function importFile(key: string, ndjson: string, format = "3ngram", type = "application/x-ndjson"): Promise<ImportOutput> {
  const res = await rest(`/api/v1/import?format=${format}`, { key, body: ndjson, type });
  expect(res.status, await res.clone().text()).toBe(200);
  return importOutputSchema.parse(await res.json());
}

const lines = (records: readonly unknown[]) => records.map((r) => JSON.stringify(r)).join("\n") + "\n";

describe("REST export and import", () => {
  let source: Tenant;
  let target: Tenant;
  let mcp: McpConnection;
  let archive: string[];
  const marker = randomUUID().slice(0, 8);

  beforeAll(async () => {
    source = await core.createTenant("archive gateway source");
    target = await core.createTenant("archive gateway target");
    mcp = await connectMcp(`${gateway.url}/mcp`, source.apiKey);
    const scope = await rest("/api/v1/scopes", { key: source.apiKey, json: { action: "create", name: "engineering", aliases: ["eng"] } });
    expect(scope.status).toBe(201);
    await mcp.call("configure_scope", { action: "set_mappings", name: "engineering", projects: ["atlas"] });
    await mcp.call("configure_scope", { action: "set_retrieval_default", mode: "default", scope: "engineering" });
    const first = rememberOutputSchema.parse(
      await mcp.call("remember", {
        memoryType: "decision",
        topic: "queue",
        content: `Use BullMQ for jobs ${marker}.`,
        project: "atlas",
        facts: [{ subject: "queue", predicate: "workers.count", value: "2" }],
      }),
    );
    await mcp.call("revise", {
      predecessorId: first.memory.id,
      edgeIntent: "supersedes",
      memoryType: "decision",
      topic: "queue",
      content: `Use BullMQ with four workers ${marker}.`,
      project: "atlas",
      facts: [{ subject: "queue", predicate: "workers.count", value: "4" }],
    });
    const due = rememberOutputSchema.parse(
      await mcp.call("remember", {
        memoryType: "commitment",
        topic: "audit",
        content: `Finish the audit ${marker}.`,
        dueAt: "2026-06-30T12:00:00Z",
        owner: "sam",
      }),
    );
    await mcp.call("resolve", { memoryId: due.memory.id, status: "resolved" });
    const note = rememberOutputSchema.parse(await mcp.call("remember", { memoryType: "note", topic: "old", content: `Old note ${marker}.`, scope: "eng" }));
    expect((await rest(`/api/v1/memories/${note.memory.id}/archive`, { key: source.apiKey, method: "POST" })).status).toBe(200);
  });
  afterAll(async () => {
    await mcp?.close();
  });

  it("GET /api/v1/export streams the archive as an NDJSON attachment", async () => {
    const res = await rest("/api/v1/export", { key: source.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="3ngram-export-\d{4}-\d{2}-\d{2}\.ndjson"$/);
    archive = (await res.text()).trimEnd().split("\n");
    const records = archive.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records[0]).toMatchObject({ kind: "archive", format: "3ngram", version: 1 });
    expect(records.filter((r) => r.kind === "memory")).toHaveLength(4);
    expect(records.filter((r) => r.kind === "edge")).toEqual([expect.objectContaining({ edgeType: "supersedes" })]);
    expect(records.filter((r) => r.kind === "fact").map((r) => [r.value, r.validTo === null])).toEqual([
      ["2", false],
      ["4", true],
    ]);
    expect(records.find((r) => r.kind === "retrieval_policy")).toEqual({ kind: "retrieval_policy", mode: "default", scope: "engineering" });
  });

  it("POST /api/v1/import restores it in a fresh tenant, and the export reads back the same", async () => {
    const result = await importFile(target.apiKey, archive.join("\n") + "\n");
    expect(result.failed, JSON.stringify(result.results)).toBe(0);
    expect(result.format).toBe("3ngram");
    expect(result.created).toBeGreaterThanOrEqual(4 + 1 + 2);
    const again = await exportLines(target.apiKey);
    expect(again.slice(1)).toEqual(archive.slice(1));
    // And running it again stores nothing.
    const rerun = await importFile(target.apiKey, archive.join("\n"));
    expect({ created: rerun.created, failed: rerun.failed, skipped: rerun.skipped }).toEqual({ created: 0, failed: 0, skipped: archive.length - 1 });
  });

  it("what was imported is readable through the MCP tools", async () => {
    const other = await connectMcp(`${gateway.url}/mcp`, target.apiKey);
    try {
      const facts = await other.call<{ facts: Array<{ value: string }> }>("get_facts", { subject: "queue", predicate: "workers.count" });
      expect(facts.facts.map((f) => f.value)).toEqual(["4"]);
      const found = await other.call<{ hits: Array<{ topic: string; content: string }> }>("search", { query: `four workers ${marker}` });
      expect(found.hits.map((h) => h.content)).toContain(`Use BullMQ with four workers ${marker}.`);
    } finally {
      await other.close();
    }
  });

  it("export never carries another tenant's rows", async () => {
    const stranger = await core.createTenant("archive gateway stranger");
    const theirs = await exportLines(stranger.apiKey);
    expect(theirs.join("\n")).not.toContain(marker);
    expect(theirs.filter((l) => l.includes('"kind":"memory"'))).toEqual([]);
  });

  it("is REST only: no MCP tool imports or exports", async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).filter((n) => /import|export/.test(n))).toEqual([]);
  });
});

describe("REST import bodies", () => {
  let tenant: Tenant;
  let readOnly: string;

  beforeAll(async () => {
    tenant = await core.createTenant("archive gateway bodies");
    readOnly = (await createTenantWithKey(core.ownerPool, { tenantName: "archive read-only", scopes: [SCOPES.read] })).apiKey;
  });

  it("takes a body far over the JSON limit and gRPC's default 4 MiB message, with per-line results", async () => {
    const records = Array.from({ length: 24 }, (_, i) => ({
      kind: "memory",
      key: `big-${i}`,
      memoryType: "note",
      topic: "big",
      content: `${i} ${randomUUID()} ${"y".repeat(199_000)}`,
    }));
    records.splice(4, 0, { kind: "memory", key: "bad", memoryType: "note", topic: "", content: "empty topic" } as never);
    const body = lines(records);
    expect(Buffer.byteLength(body)).toBeGreaterThan(4.5 * 1024 * 1024);
    const result = await importFile(tenant.apiKey, body, "3ngram", "text/plain");
    expect(result.results.map((r) => r.outcome)).toEqual(records.map((_, i) => (i === 4 ? "error" : "created")));
    expect(result.results[4]).toMatchObject({ line: 5, reason: "invalid_input", message: expect.stringMatching(/^topic: /) });
  });

  it("stores nothing when the client hangs up in the middle of its upload", async () => {
    const count = async () =>
      (await core.ownerPool.query<{ n: number }>("SELECT count(*)::int AS n FROM memories WHERE tenant_id = $1", [tenant.tenantId])).rows[0]!.n;
    const before = await count();
    const url = new URL(`${gateway.url}/api/v1/import?format=3ngram`);
    const req = httpRequest(url, {
      method: "POST",
      headers: { Authorization: `Bearer ${tenant.apiKey}`, "Content-Type": "application/x-ndjson", "Transfer-Encoding": "chunked" },
    });
    const closed = new Promise<void>((resolve) => req.on("close", () => resolve()));
    req.on("error", () => undefined);
    // Two whole records reach the gateway (and the memory service), then the connection is cut
    // before the rest of the file: neither may be stored.
    req.write(lines([0, 1].map((i) => ({ kind: "memory", key: `cut-${i}`, memoryType: "note", topic: "cut", content: `cut short ${i}` }))));
    await new Promise((resolve) => setTimeout(resolve, 300));
    req.destroy();
    await closed;
    // Long enough for an import wrongly taken as whole to have stored its records.
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(await count()).toBe(before);
  });

  it("refuses a body over the import limit with 413", async () => {
    const body = "x".repeat(MAX_IMPORT_BODY_BYTES + 1);
    const res = await rest("/api/v1/import", { key: tenant.apiKey, body, type: "application/x-ndjson" });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: "invalid_input", detail: `request body exceeds ${MAX_IMPORT_BODY_BYTES} bytes` });
  });

  it("refuses JSON bodies, unknown formats, read-only keys and missing keys", async () => {
    const json = await rest("/api/v1/import", { key: tenant.apiKey, json: { kind: "memory" } });
    expect(json.status).toBe(415);
    const format = await rest("/api/v1/import?format=csv", { key: tenant.apiKey, body: "", type: "text/plain" });
    expect(format.status).toBe(400);
    expect(await format.json()).toMatchObject({ error: "invalid_input", field: "format" });
    const extra = await rest("/api/v1/import?formt=3ngram", { key: tenant.apiKey, body: "", type: "text/plain" });
    expect(await extra.json()).toMatchObject({ error: "invalid_input", field: "formt" });
    const ro = await rest("/api/v1/import", { key: readOnly, body: lines([{ kind: "scope", name: "nope" }]), type: "application/x-ndjson" });
    expect(ro.status).toBe(403);
    expect(await ro.json()).toMatchObject({ error: "insufficient_scope" });
    const none = await fetch(`${gateway.url}/api/v1/export`);
    expect(none.status).toBe(401);
    // A read-only key may export.
    expect((await rest("/api/v1/export", { key: readOnly })).status).toBe(200);
  });

  it("imports the MCP memory server's JSONL and the tools then find it", async () => {
    const graph = [
      { type: "entity", name: "Grace_Hopper", entityType: "person", observations: ["Popularised the term debugging", "Worked on COBOL"] },
      { type: "entity", name: "COBOL", entityType: "language", observations: ["Business oriented language from 1959"] },
      { type: "relation", from: "Grace_Hopper", to: "COBOL", relationType: "influenced" },
    ];
    const result = await importFile(tenant.apiKey, lines(graph), "mcp-memory");
    expect(result).toMatchObject({ format: "mcp-memory", created: 4, failed: 0 });
    await withMcp(`${gateway.url}/mcp`, tenant.apiKey, async (mcp) => {
      const found = await mcp.call<{ hits: Array<{ topic: string; content: string }> }>("search", { query: "term debugging" });
      expect(found.hits[0]).toMatchObject({ topic: "Grace_Hopper", content: "Popularised the term debugging" });
      const facts = await mcp.call<{ facts: Array<{ predicate: string; value: string }> }>("get_facts", { subject: "Grace_Hopper" });
      expect(facts.facts.map((f) => [f.predicate, f.value])).toEqual([["influenced", "COBOL"]]);
    });
    const rerun = await importFile(tenant.apiKey, lines(graph), "mcp-memory");
    expect(rerun).toMatchObject({ created: 0, skipped: 4, failed: 0 });
  });

  it("imports mem0 memories one per line, reports what it could not map, and the tools then find them", async () => {
    const mem0 = await core.createTenant("archive gateway mem0");
    const body = lines([...MEM0_MEMORIES, MEM0_UNMAPPABLE[1]!.record]);
    const result = await importFile(mem0.apiKey, body, "mem0");
    expect(result).toMatchObject({ format: "mem0", created: 3, skipped: 0, failed: 1 });
    expect(result.results[3]).toMatchObject({ line: 4, outcome: "error", reason: "invalid_input" });
    expect(result.results[3]!.message).toMatch(/^created_at: /);
    await withMcp(`${gateway.url}/mcp`, mem0.apiKey, async (mcp) => {
      const found = await mcp.call<{ hits: Array<{ topic: string; content: string; memoryType: string }> }>("search", { query: "green tea afternoon" });
      expect(found.hits[0]).toMatchObject({ topic: "food", content: MEM0_MEMORIES[0]!.memory, memoryType: "fact" });
    });
    const rerun = await importFile(mem0.apiKey, body, "mem0");
    expect(rerun).toMatchObject({ created: 0, skipped: 3, failed: 1 });
  });

  it("imports basic-memory notes sent as {path, content} lines, refuses a line that is no note, and the tools then find them", async () => {
    const tenant = await core.createTenant("archive gateway basic-memory");
    const notes = basicMemoryNotes();
    const body = lines([...notes, { path: "stray.md" }, "just a string"]);
    const records = BASIC_MEMORY_RECORDS.memories + BASIC_MEMORY_RECORDS.facts;
    const result = await importFile(tenant.apiKey, body, "basic-memory");
    expect(result).toMatchObject({ format: "basic-memory", created: records, skipped: 0, failed: 2 });
    expect(result.results.filter((r) => r.outcome === "error").map((r) => [r.line, r.reason, r.message?.split(":")[0]])).toEqual([
      [notes.length + 1, "invalid_input", "content"],
      [notes.length + 2, "invalid_input", "line"],
    ]);
    await withMcp(`${gateway.url}/mcp`, tenant.apiKey, async (mcp) => {
      const found = await mcp.call<{ hits: Array<{ topic: string; memoryType: string }> }>("search", { query: "reviews before noon" });
      expect(found.hits[0]).toMatchObject({ topic: "Team Preferences", memoryType: "preference" });
      const facts = await mcp.call<{ facts: Array<{ predicate: string; value: string }> }>("get_facts", { subject: "Team Preferences" });
      expect(facts.facts.map((f) => [f.predicate, f.value])).toEqual([["relates_to", "Ledger Database"]]);
    });
    const rerun = await importFile(tenant.apiKey, body, "basic-memory");
    expect(rerun).toMatchObject({ created: 0, skipped: records, failed: 2 });
  });

  it("streams an export of many pages whole", async () => {
    const many = await core.createTenant("archive gateway many");
    const records = Array.from({ length: 1_100 }, (_, i) => ({
      kind: "memory",
      key: `n-${i}`,
      memoryType: "note",
      topic: "many",
      content: `numbered memory ${i}`,
    }));
    const result = await importFile(many.apiKey, lines(records));
    expect(result.created).toBe(1_100);
    const exported = await exportLines(many.apiKey);
    const keys = exported
      .map((l) => JSON.parse(l) as { kind: string; key?: string })
      .filter((r) => r.kind === "memory")
      .map((r) => r.key);
    expect(keys).toEqual(records.map((r) => r.key));
    // 1,100 single-record transactions take ~10 s on a quiet 2-core machine and twice that when it
    // is shared; the bound is there to catch a hang, not to time the import.
  }, 120_000);
});
