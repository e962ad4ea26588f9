/**
 * Search end to end through a real gateway over the real memory and search services: the extended
 * filters, chronological listing, cursors, compact projection, the coverage envelope and the
 * retrieval-default policy, through the official MCP client (two protocol eras) and over REST
 * (POST /api/v1/search), including the refusals on both transports.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { searchOutputSchema, type SearchOutput } from "@3ngram/schema";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import type { RunningGateway } from "../../src/gateway.js";
import { startTestGateway } from "../support/gateway.js";
import { ERAS, callTool, connect, errorText, invalidArguments, structured } from "../support/mcp-client.js";

type Key = { tenantId: string; userId: string; apiKey: string };

let core: CoreServices;
let gateway: RunningGateway;

beforeAll(async () => {
  core = await startCoreServices({ label: "gateway-search" });
  gateway = await startTestGateway({ memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk });
});
afterAll(async () => {
  await gateway?.close();
  await core?.close();
});

const post = (path: string, json: unknown, key: string) =>
  fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify(json),
  });

async function restSearch(json: unknown, key: string): Promise<SearchOutput> {
  const res = await post("/api/v1/search", json, key);
  expect(res.status, JSON.stringify(json)).toBe(200);
  return searchOutputSchema.parse(await res.json());
}

async function restRefusal(json: unknown, key: string): Promise<{ error: string; field?: string; detail?: string }> {
  const res = await post("/api/v1/search", json, key);
  expect(res.status, JSON.stringify(json)).toBe(400);
  return (await res.json()) as { error: string; field?: string; detail?: string };
}

const ids = (out: SearchOutput) => out.hits.map((h) => h.id);

/**
 * Remembers one memory over REST and answers its id and recorded time (as hits show it, to the
 * millisecond); then waits until the database clock is 2 ms past it, so every row has its own instant.
 */
async function remember(key: string, body: Record<string, unknown>): Promise<{ id: string; recordedAt: string }> {
  const res = await post("/api/v1/memories", { memoryType: "note", ...body }, key);
  expect(res.status).toBe(201);
  const out = (await res.json()) as { memory: { id: string } };
  const [row] = (await core.ownerPool.query<{ recordedAt: Date }>(`SELECT recorded_at AS "recordedAt" FROM memories WHERE id = $1`, [out.memory.id])).rows;
  const recordedAt = row!.recordedAt.toISOString();
  for (;;) {
    const { rows } = await core.ownerPool.query<{ now: Date }>("SELECT clock_timestamp() AS now");
    if (rows[0]!.now.getTime() >= Date.parse(recordedAt) + 2) break;
    await sleep(1);
  }
  return { id: out.memory.id, recordedAt };
}

describe.each(ERAS.slice(0, 2))("search over MCP, $name", (era) => {
  let tenant: Key;
  let client: Client;
  const rows: Record<string, { id: string; recordedAt: string }> = {};

  const search = async (args: Record<string, unknown>): Promise<SearchOutput> => searchOutputSchema.parse(structured(await callTool(client, "search", args)));

  beforeAll(async () => {
    tenant = await core.createTenant(`search mcp ${era.expectedVersion}`);
    client = await connect(gateway.url, tenant.apiKey, era);
    rows.a = await remember(tenant.apiKey, {
      memoryType: "decision",
      topic: "ferry timetable",
      content: "We take the 8:10 ferry to the island office.",
      project: "island",
    });
    rows.b = await remember(tenant.apiKey, { memoryType: "fact", topic: "ferry prices", content: "A ferry return ticket costs 14 euros.", project: "island" });
    rows.c = await remember(tenant.apiKey, { memoryType: "note", topic: "ferry seasickness", content: "Bring ginger sweets on the ferry.", project: "travel" });
    rows.d = await remember(tenant.apiKey, {
      memoryType: "note",
      topic: "ferry strike",
      content: "The ferry crews strike on the first Monday.",
      project: "news",
    });
  });
  afterAll(async () => {
    await client?.close();
  });

  it("answers the envelope: hits, count, hasMore, coverage with order, legs, filters, evidence", async () => {
    const out = await search({ query: "ferry island office", limit: 2 });
    expect(out.count).toBe(2);
    expect(out.hasMore).toBe(true);
    expect(out.nextCursor).toEqual(expect.any(String));
    expect(out.coverage).toMatchObject({
      order: "relevance",
      filters: { memoryTypes: [], scope: null, projects: [], status: "active", recordedAfter: null, recordedBefore: null },
      appliedScope: null,
      asOf: null,
      poolSize: 4,
      hasMore: true,
      abstained: false,
    });
    expect(out.coverage.legs.map((l) => l.leg)).toEqual(["vector", "fts", "recency"]);
    expect(out.coverage.evidence.anyLexical).toBe(true);
    expect(out.appliedScope).toBeUndefined();
  });

  it("filters by several types and several projects, and by recorded time", async () => {
    expect(ids(await search({ query: "ferry", memoryTypes: ["decision", "fact"], limit: 25 })).sort()).toEqual([rows.a!.id, rows.b!.id].sort());
    expect(ids(await search({ query: "ferry", projects: ["travel", "news"], limit: 25 })).sort()).toEqual([rows.c!.id, rows.d!.id].sort());
    const window = await search({ query: "ferry", recordedAfter: rows.b!.recordedAt, recordedBefore: rows.c!.recordedAt, limit: 25 });
    expect(ids(window).sort()).toEqual([rows.b!.id, rows.c!.id].sort());
    expect(window.coverage.filters.recordedAfter).toBe(rows.b!.recordedAt);
  });

  it("travels back with asOf and lifts the active-only default", async () => {
    const past = await search({ query: "ferry", asOf: { asKnownAt: rows.a!.recordedAt }, limit: 25 });
    expect(ids(past)).toEqual([rows.a!.id]);
    expect(past.coverage.asOf).toEqual({ asKnownAt: rows.a!.recordedAt });
    expect(past.coverage.filters.status).toBeNull();
  });

  it("lists chronologically without a query and walks every page through the cursor", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await search({ order: "chronological", memoryTypes: ["note", "fact", "decision"], limit: 3, ...(cursor ? { cursor } : {}) });
      expect(page.coverage.order).toBe("chronological");
      expect(page.coverage.poolSize).toBeNull();
      seen.push(...ids(page));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([rows.d!.id, rows.c!.id, rows.b!.id, rows.a!.id]);
  });

  it("serves compact hits: id, memoryType, topic and score only", async () => {
    const out = await search({ query: "ferry", projection: "compact", limit: 25 });
    expect(out.hits.length).toBe(4);
    for (const hit of out.hits) expect(Object.keys(hit).sort()).toEqual(["id", "memoryType", "score", "topic"]);
  });

  it("continues a relevance cursor and refuses it for another query as an isError result", async () => {
    const first = await search({ query: "ferry", limit: 3 });
    const second = await search({ query: "ferry", limit: 3, cursor: first.nextCursor });
    expect([...ids(first), ...ids(second)].sort()).toEqual(
      Object.values(rows)
        .map((r) => r.id)
        .sort(),
    );
    expect(second.hasMore).toBe(false);
    const foreign = errorText(await callTool(client, "search", { query: "ferry timetable", limit: 3, cursor: first.nextCursor }));
    expect(foreign).toMatch(/^invalid_input: cursor: cursor was issued for a different query — omit the cursor/);
    const garbled = errorText(await callTool(client, "search", { query: "ferry", cursor: "not-a-cursor" }));
    expect(garbled).toMatch(/^invalid_input: cursor: /);
  });

  it("refuses invalid combinations naming the field", async () => {
    const both = await invalidArguments(callTool(client, "search", { query: "q", project: "a", projects: ["b"] }));
    expect(both.data).toMatchObject({ reason: "invalid_input", field: "projects" });
    const unfiltered = await invalidArguments(callTool(client, "search", { order: "chronological" }));
    expect(unfiltered.data).toMatchObject({ field: "query" });
    const noQuery = await invalidArguments(callTool(client, "search", { memoryType: "note" }));
    expect(noQuery.data).toMatchObject({ field: "query" });
    const reversed = await invalidArguments(
      callTool(client, "search", { query: "q", recordedAfter: "2026-02-01T00:00:00Z", recordedBefore: "2026-01-01T00:00:00Z" }),
    );
    expect(reversed.data).toMatchObject({ field: "recordedBefore" });
    const precise = await invalidArguments(callTool(client, "search", { query: "q", recordedAfter: "2026-02-01T00:00:00.1234Z" }));
    expect(precise.data).toMatchObject({ field: "recordedAfter" });
    const types = await invalidArguments(callTool(client, "search", { query: "q", memoryTypes: [] }));
    expect(types.data).toMatchObject({ field: "memoryTypes" });
  });

  it("applies the retrieval default and echoes appliedScope; require refuses unscoped searches", async () => {
    await remember(tenant.apiKey, { topic: "ferry at work", content: "The work ferry shuttle leaves at five.", scope: "work" });
    structured(await callTool(client, "configure_scope", { action: "set_retrieval_default", mode: "default", scope: "work" }));
    const narrowed = await search({ query: "ferry", limit: 25 });
    expect(narrowed.appliedScope).toBe("work");
    expect(narrowed.coverage.appliedScope).toBe("work");
    expect(narrowed.hits.map((h) => ("scope" in h ? h.scope : null))).toEqual(["work"]);
    structured(await callTool(client, "configure_scope", { action: "set_retrieval_default", mode: "require" }));
    const refused = errorText(await callTool(client, "search", { query: "ferry" }));
    expect(refused).toMatch(/^invalid_input: scope: .*registered scopes: personal, work/);
    expect(ids(await search({ query: "ferry", scope: "personal", limit: 25 })).length).toBe(4);
    structured(await callTool(client, "configure_scope", { action: "set_retrieval_default", mode: "off" }));
  });
});

describe("search over REST", () => {
  let tenant: Key;
  const rows: { id: string; recordedAt: string }[] = [];

  beforeAll(async () => {
    tenant = await core.createTenant("search rest");
    for (let i = 0; i < 6; i++) {
      rows.push(
        await remember(tenant.apiKey, {
          memoryType: i % 2 ? "fact" : "note",
          topic: `orchard ${i}`,
          content: `Apple tree ${i} was pruned.`,
          project: i < 3 ? "north" : "south",
        }),
      );
    }
  });

  it("takes the same input and answers the same envelope as the tool", async () => {
    const out = await restSearch({ query: "apple tree pruned", projects: ["north"], memoryTypes: ["note", "fact"], limit: 2 }, tenant.apiKey);
    expect(out.count).toBe(2);
    expect(out.coverage.filters).toMatchObject({ projects: ["north"], status: "active" });
    expect(out.coverage.poolSize).toBe(3);
    const next = await restSearch(
      { query: "apple tree pruned", projects: ["north"], memoryTypes: ["note", "fact"], limit: 2, cursor: out.nextCursor },
      tenant.apiKey,
    );
    expect([...ids(out), ...ids(next)].sort()).toEqual(
      rows
        .slice(0, 3)
        .map((r) => r.id)
        .sort(),
    );
  });

  it("lists chronologically with a keyset cursor and compact hits", async () => {
    const first = await restSearch({ order: "chronological", projects: ["north", "south"], limit: 4, projection: "compact" }, tenant.apiKey);
    const second = await restSearch(
      { order: "chronological", projects: ["north", "south"], limit: 4, projection: "compact", cursor: first.nextCursor },
      tenant.apiKey,
    );
    expect([...ids(first), ...ids(second)]).toEqual(rows.map((r) => r.id).reverse());
    expect(second.nextCursor).toBeUndefined();
  });

  it("narrows by recorded time and asOf", async () => {
    const window = await restSearch(
      { order: "chronological", recordedAfter: rows[1]!.recordedAt, recordedBefore: rows[3]!.recordedAt, limit: 25 },
      tenant.apiKey,
    );
    expect(ids(window)).toEqual([rows[3]!.id, rows[2]!.id, rows[1]!.id]);
    const past = await restSearch({ query: "apple", asOf: { asKnownAt: rows[0]!.recordedAt, validAt: rows[0]!.recordedAt } }, tenant.apiKey);
    expect(ids(past)).toEqual([rows[0]!.id]);
  });

  it("answers 400 naming the field for every invalid combination", async () => {
    const cases: [unknown, string][] = [
      [{ query: "q", project: "a", projects: ["b"] }, "projects"],
      [{ query: "q", memoryType: "note", memoryTypes: ["fact"] }, "memoryTypes"],
      [{ order: "chronological" }, "query"],
      [{ projects: ["north"] }, "query"],
      [{ query: "q", recordedAfter: "2026-02-01T00:00:00Z", recordedBefore: "2026-01-01T00:00:00Z" }, "recordedBefore"],
      [{ query: "q", asOf: {} }, "asOf"],
      [{ query: "q", asOf: { validAt: "yesterday" } }, "asOf.validAt"],
      [{ query: "q", projection: "tiny" }, "projection"],
      [{ query: "q", order: "random" }, "order"],
      [{ query: "q", cursor: "garbled!" }, "cursor"],
    ];
    for (const [body, field] of cases) {
      const refusal = await restRefusal(body, tenant.apiKey);
      expect(refusal, JSON.stringify(body)).toMatchObject({ error: "invalid_input", field });
    }
  });

  it("answers 400 for a cursor issued to another query, without echoing the query", async () => {
    const first = await restSearch({ query: "apple tree", limit: 1 }, tenant.apiKey);
    const refusal = await restRefusal({ query: "pear tree", limit: 1, cursor: first.nextCursor }, tenant.apiKey);
    expect(refusal).toMatchObject({ error: "invalid_input", field: "cursor" });
    expect(JSON.stringify(refusal)).toContain("cursor was issued for a different query");
    expect(JSON.stringify(refusal)).not.toContain("pear");
  });
});
