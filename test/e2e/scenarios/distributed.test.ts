/**
 * The four services as separate processes against PostgreSQL + pgvector and Redis, driven
 * through the gateway with the official MCP client SDK and plain HTTP.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "@3ngram/db";
import { checkHealth } from "@3ngram/rpc";
import { createTestDatabase, deleteKeyPrefix, TEST_REDIS_URL, uniqueKeyPrefix, type TestDatabase } from "../../support/database.js";
import { createTestKeys } from "../../support/keys.js";
import { serviceEnv } from "../../support/service-env.js";
import { connectMcp, type McpConnection } from "../../support/mcp.js";
import { freePort, REPO_ROOT, startServiceProcess, waitFor, type ServiceProcess } from "../../support/processes.js";

const run = promisify(execFile);

interface Tenant {
  tenantId: string;
  apiKey: string;
}

let db: TestDatabase;
let owner: Pool;
let processes: Record<"memory" | "search" | "consolidator" | "gateway", ServiceProcess>;
let baseUrl: string;
let tenantA: Tenant;
let tenantB: Tenant;
let mcpA: McpConnection;

async function createTenant(name: string): Promise<Tenant> {
  const { stdout } = await run(process.execPath, ["services/memory/dist/cli.js", "create-tenant", name], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", DATABASE_URL: db.url },
  });
  return JSON.parse(stdout) as Tenant;
}

function rest(path: string, apiKey: string | null, init: { method?: string; body?: string } = {}): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method: init.method ?? "GET",
    headers: { "content-type": "application/json", ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
}

async function memoryCount(): Promise<number> {
  const { rows } = await owner.query<{ n: number }>("SELECT count(*)::int AS n FROM memories");
  return rows[0]!.n;
}

let prefix: string | undefined;

beforeAll(async () => {
  db = await createTestDatabase("e2e");
  owner = createPool({ connectionString: db.url, max: 2, applicationName: "3ngram-e2e" });
  const keys = await createTestKeys();
  const [memoryPort, searchPort, gatewayPort] = [await freePort(), await freePort(), await freePort()];
  prefix = uniqueKeyPrefix("e2e");
  const common = serviceEnv({ databaseUrl: db.url, redisUrl: TEST_REDIS_URL, prefix, keys, memoryPort, searchPort });
  // Inline embedding is switched off so every memory goes through the consolidator's retry job.
  const memory = startServiceProcess("memory", "services/memory/dist/main.js", { ...common, GRPC_PORT: String(memoryPort), EMBED_INLINE_BUDGET_MS: "0" });
  await waitFor("memory health", async () => (await checkHealth(common.MEMORY_ADDR)) === "SERVING", 60_000, memory);
  const search = startServiceProcess("search", "services/search/dist/main.js", { ...common, GRPC_PORT: String(searchPort) });
  const consolidator = startServiceProcess("consolidator", "services/consolidator/dist/main.js", common);
  const gateway = startServiceProcess("gateway", "services/gateway/dist/main.js", {
    ...common,
    PORT: String(gatewayPort),
    HOST: "127.0.0.1",
    RATE_LIMIT_KEY_PREFIX: `${common.REDIS_KEY_PREFIX}:rl`,
  });
  processes = { memory, search, consolidator, gateway };
  baseUrl = `http://127.0.0.1:${gatewayPort}`;
  await waitFor("search health", async () => (await checkHealth(common.SEARCH_ADDR)) === "SERVING", 60_000, search);
  await waitFor("gateway readiness", async () => (await fetch(`${baseUrl}/ready`)).status === 200, 60_000, gateway);
  tenantA = await createTenant("tenant-a");
  tenantB = await createTenant("tenant-b");
  mcpA = await connectMcp(`${baseUrl}/mcp`, tenantA.apiKey);
}, 180_000);

afterAll(async () => {
  await mcpA?.close().catch(() => {});
  for (const p of Object.values(processes ?? {})) await p.stop();
  await owner?.end();
  await db?.drop();
  if (prefix) await deleteKeyPrefix(prefix);
});

interface RememberOut {
  memory: { id: string; topic: string };
  embedded: string;
}
interface SearchOut {
  hits: Array<{ id: string; topic: string; content: string }>;
  coverage: { legs: Array<{ leg: string; available: boolean }> };
}
interface GetOut {
  memories: Array<{ id: string; content: string; embedded: string }>;
  notFound: string[];
}

describe("distributed mode", () => {
  let rightId: string;

  it("remembers and searches through MCP, with embeddings filled in by the consolidator", async () => {
    const first = await mcpA.call<RememberOut>("remember", {
      memoryType: "decision",
      topic: "payments provider",
      content: "We decided to use Stripe for card payments in the EU launch.",
      project: "billing",
    });
    const second = await mcpA.call<RememberOut>("remember", {
      memoryType: "preference",
      topic: "meeting times",
      content: "The user prefers meetings after 10am and never on Fridays.",
    });
    rightId = first.memory.id;
    expect(first.embedded).toBe("pending");
    expect(second.embedded).toBe("pending");
    await waitFor(
      "embeddings from the consolidator",
      async () => {
        const got = await mcpA.call<GetOut>("get_memories", { ids: [first.memory.id, second.memory.id] });
        return got.memories.length === 2 && got.memories.every((m) => m.embedded === "done");
      },
      30_000,
      processes.consolidator,
    );
    const found = await mcpA.call<SearchOut>("search", { query: "which payment provider did we pick for cards" });
    expect(found.hits[0]?.id).toBe(first.memory.id);
    expect(found.coverage.legs.find((l) => l.leg === "vector")?.available).toBe(true);
  });

  it("speaks the modern protocol revision too", async () => {
    const modern = await connectMcp(`${baseUrl}/mcp`, tenantA.apiKey, { modern: true });
    try {
      const found = await modern.call<SearchOut>("search", { query: "meetings on Fridays" });
      expect(found.hits[0]?.topic).toBe("meeting times");
    } finally {
      await modern.close();
    }
  });

  it("serves the same operations over REST", async () => {
    const created = await rest("/api/v1/memories", tenantA.apiKey, {
      method: "POST",
      body: JSON.stringify({ memoryType: "blocker", topic: "release", content: "Release is blocked on the security review." }),
    });
    expect(created.status).toBe(201);
    const body = (await created.json()) as RememberOut;
    const read = await rest(`/api/v1/memories/${body.memory.id}`, tenantA.apiKey);
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ id: body.memory.id, content: "Release is blocked on the security review.", memoryType: "blocker" });
    const searched = await rest("/api/v1/search", tenantA.apiKey, { method: "POST", body: JSON.stringify({ query: "security review blocking the release" }) });
    expect(searched.status).toBe(200);
    expect(((await searched.json()) as SearchOut).hits[0]?.id).toBe(body.memory.id);
  });

  it("keeps tenants apart on every surface: a foreign id looks like an unknown id", async () => {
    const unknown = "01890a5d-ac96-774b-bcce-b302099a8057";
    const mcpB = await connectMcp(`${baseUrl}/mcp`, tenantB.apiKey);
    try {
      const got = await mcpB.call<GetOut>("get_memories", { ids: [rightId, unknown] });
      expect(got.memories).toEqual([]);
      expect(got.notFound.sort()).toEqual([rightId, unknown].sort());
      const searched = await mcpB.call<SearchOut>("search", { query: "Stripe card payments" });
      expect(searched.hits.map((h) => h.id)).not.toContain(rightId);
    } finally {
      await mcpB.close();
    }
    const foreign = await rest(`/api/v1/memories/${rightId}`, tenantB.apiKey);
    const missing = await rest(`/api/v1/memories/${unknown}`, tenantB.apiKey);
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    const strip = (b: Record<string, unknown>) => ({ ...b, request_id: undefined });
    expect(strip((await foreign.json()) as Record<string, unknown>)).toEqual(strip((await missing.json()) as Record<string, unknown>));
  });

  it("refuses missing and wrong API keys", async () => {
    expect((await rest("/api/v1/search", null, { method: "POST", body: "{}" })).status).toBe(401);
    const wrong = await rest("/api/v1/search", `${tenantA.apiKey}x`, { method: "POST", body: JSON.stringify({ query: "x" }) });
    expect(wrong.status).toBe(401);
    const mcp = await fetch(`${baseUrl}/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(mcp.status).toBe(401);
  });

  it("rejects bad input on every surface, naming the field, and writes nothing", async () => {
    const before = await memoryCount();
    // Over MCP, arguments that do not parse are an isError result naming the field (SEP-1303).
    const refused = async (args: { name: string; arguments: Record<string, unknown> }) => {
      const result = (await mcpA.client.callTool(args)) as { isError?: boolean; content: { text?: string }[] };
      expect(result.isError).toBe(true);
      return result.content[0]?.text ?? "";
    };
    expect(await refused({ name: "remember", arguments: { memoryType: "note", topic: "t", content: "x".repeat(2001) } })).toMatch(/^invalid_input: content: /);
    expect(await refused({ name: "remember", arguments: { memoryType: "note", topic: "t", content: "c", mood: "happy" } })).toBe(
      "invalid_input: mood: unrecognized key",
    );
    expect(await refused({ name: "search", arguments: { query: "x", limit: "five" } })).toMatch(/^invalid_input: limit: /);

    const cases: Array<[string, string, string]> = [
      ["/api/v1/memories", JSON.stringify({ memoryType: "note", topic: "t", content: "x".repeat(2001) }), "content"],
      ["/api/v1/memories", JSON.stringify({ memoryType: "note", topic: "t", content: "c", mood: "happy" }), "mood"],
      ["/api/v1/memories", JSON.stringify({ memoryType: 7, topic: "t", content: "c" }), "memoryType"],
      ["/api/v1/search", JSON.stringify({ query: "x", limit: 100 }), "limit"],
    ];
    for (const [path, body, field] of cases) {
      const response = await rest(path, tenantA.apiKey, { method: "POST", body });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { field?: string }).field).toBe(field);
    }
    const malformed = await rest("/api/v1/memories", tenantA.apiKey, { method: "POST", body: '{"memoryType": "note",' });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: string }).error).toBe("invalid_input");
    expect(await memoryCount()).toBe(before);
  });

  it("fails search clearly and retryably when the search service is down, while remember still works", async () => {
    await processes.search.stop("SIGKILL");
    const text = await mcpA.callError("search", { query: "payments" });
    expect(text).toMatch(/unavailable/);
    expect(text).toMatch(/retry/i);
    const response = await rest("/api/v1/search", tenantA.apiKey, { method: "POST", body: JSON.stringify({ query: "payments" }) });
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).not.toBeNull();
    const stored = await mcpA.call<RememberOut>("remember", { memoryType: "note", topic: "outage", content: "Remember still works while search is down." });
    expect(stored.memory.id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await fetch(`${baseUrl}/ready`)).status).toBe(503);
  });
});
