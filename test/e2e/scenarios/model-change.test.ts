/**
 * A change of embedding model in distributed mode: memories written with one model, the four
 * services restarted with another. Search answers at once (the lexical leg finds what the new model
 * has not embedded yet), describe_environment says how many memories wait, and the consolidator
 * re-embeds all of them by itself when it starts: no operator command, no wait for its half-hourly
 * schedule. The hashing embedder stands in for both models (512 then 384 dimensions, so the model
 * ids hashing-512 and hashing-384, and the new dimension's HNSW index, migration 0013): quick and
 * deterministic, and nothing in the mechanism depends on which model runs.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "@3ngram/db";
import { checkHealth } from "@3ngram/rpc";
import { createTestDatabase, deleteKeyPrefix, TEST_REDIS_URL, uniqueKeyPrefix, type TestDatabase } from "../../support/database.js";
import { createTestKeys, type TestKeys } from "../../support/keys.js";
import { connectMcp } from "../../support/mcp.js";
import { embeddingProgress, rareWord, writeRareWordNotes, type SearchOut } from "../../support/model-change.js";
import { freePort, REPO_ROOT, startServiceProcess, waitFor, type ServiceProcess } from "../../support/processes.js";
import { loadGatewayEnv, serviceEnv } from "../../support/service-env.js";

const run = promisify(execFile);
/** More than one backfill run looks at (160), so re-embedding takes a chain of runs. */
const MEMORIES = 250;

let db: TestDatabase;
let owner: Pool;
let keys: TestKeys;
let prefix: string;
let ports: { memory: number; search: number; gateway: number };
let running: ServiceProcess[] = [];
let tenant: { tenantId: string; apiKey: string };

function env(dimensions: number): ReturnType<typeof serviceEnv> {
  return {
    ...serviceEnv({ databaseUrl: db.url, redisUrl: TEST_REDIS_URL, prefix, keys, memoryPort: ports.memory, searchPort: ports.search }),
    EMBEDDINGS_DIMENSIONS: String(dimensions),
  };
}

/** Memory, search and gateway with the hashing embedder of `dimensions`; the consolidator separately. */
async function startServing(dimensions: number): Promise<string> {
  const common = env(dimensions);
  const memory = startServiceProcess("memory", "services/memory/dist/main.js", { ...common, GRPC_PORT: String(ports.memory) });
  running.push(memory);
  await waitFor("memory health", async () => (await checkHealth(common.MEMORY_ADDR)) === "SERVING", 60_000, memory);
  const search = startServiceProcess("search", "services/search/dist/main.js", { ...common, GRPC_PORT: String(ports.search) });
  const gateway = startServiceProcess("gateway", "services/gateway/dist/main.js", { ...common, ...loadGatewayEnv(ports.gateway, prefix) });
  running.push(search, gateway);
  const baseUrl = `http://127.0.0.1:${ports.gateway}`;
  await waitFor("search health", async () => (await checkHealth(common.SEARCH_ADDR)) === "SERVING", 60_000, search);
  await waitFor("gateway readiness", async () => (await fetch(`${baseUrl}/ready`)).status === 200, 60_000, gateway);
  return baseUrl;
}

function startConsolidator(dimensions: number): ServiceProcess {
  const consolidator = startServiceProcess("consolidator", "services/consolidator/dist/main.js", env(dimensions));
  running.push(consolidator);
  return consolidator;
}

async function stopAll(): Promise<void> {
  for (const p of running.reverse()) expect(await p.stop()).toBe(0);
  running = [];
}

const progress = (baseUrl: string) => embeddingProgress(baseUrl, tenant.apiKey);

beforeAll(async () => {
  db = await createTestDatabase("modelchange");
  owner = createPool({ connectionString: db.url, max: 2, applicationName: "3ngram-e2e-model-change" });
  keys = await createTestKeys();
  prefix = uniqueKeyPrefix("modelchange");
  ports = { memory: await freePort(), search: await freePort(), gateway: await freePort() };
}, 60_000);

afterAll(async () => {
  for (const p of running) await p.stop();
  await owner?.end();
  await db?.drop();
  if (prefix) await deleteKeyPrefix(prefix);
});

describe("changing the embedding model (distributed)", () => {
  it("answers searches at once from the lexical leg, shows what is pending, and re-embeds every memory by itself", async () => {
    // Before: the services with model A (hashing-512); every memory is embedded inline.
    let baseUrl = await startServing(512);
    startConsolidator(512);
    const { stdout } = await run(process.execPath, ["services/memory/dist/cli.js", "create-tenant", "model-change"], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? "", DATABASE_URL: db.url },
    });
    tenant = JSON.parse(stdout) as { tenantId: string; apiKey: string };
    const ids = await writeRareWordNotes(baseUrl, tenant.apiKey, MEMORIES);
    expect(await progress(baseUrl)).toEqual({ model: "hashing-512", dimensions: 512, embedded: MEMORIES, pending: 0 });
    await stopAll();

    // After: model B (hashing-384). The consolidator starts last, so what search and
    // describe_environment answer before any re-embedding is observable.
    baseUrl = await startServing(384);
    expect(await progress(baseUrl)).toEqual({ model: "hashing-384", dimensions: 384, embedded: 0, pending: MEMORIES });
    const mcp = await connectMcp(`${baseUrl}/mcp`, tenant.apiKey);
    try {
      const target = 137;
      const before = await mcp.call<SearchOut>("search", { query: `${rareWord(target)} project` });
      expect(before.hits[0]?.id).toBe(ids[target]);
      expect(before.coverage.abstained).toBe(false);
      // No memory has a vector of the new model yet: the hit came from the lexical leg.
      expect(before.coverage.legs.find((l) => l.leg === "vector")).toMatchObject({ candidates: 0 });
      expect(before.coverage.legs.find((l) => l.leg === "fts")!.candidates).toBeGreaterThan(0);

      const consolidator = startConsolidator(384);
      await waitFor("re-embedding to finish", async () => (await progress(baseUrl)).pending === 0, 120_000, consolidator);
      expect(await progress(baseUrl)).toEqual({ model: "hashing-384", dimensions: 384, embedded: MEMORIES, pending: 0 });
      const { rows } = await owner.query<{ model: string; dim: number; n: number }>(
        "SELECT embedding_model AS model, embedding_dim AS dim, count(*)::int AS n FROM memories WHERE tenant_id = $1 AND status = 'active' AND valid_to IS NULL GROUP BY 1, 2",
        [tenant.tenantId],
      );
      expect(rows).toEqual([{ model: "hashing-384", dim: 384, n: MEMORIES }]);

      const after = await mcp.call<SearchOut>("search", { query: `${rareWord(target)} project` });
      expect(after.hits[0]?.id).toBe(ids[target]);
      expect(after.coverage.legs.find((l) => l.leg === "vector")!.candidates).toBeGreaterThan(0);
    } finally {
      await mcp.close();
    }

    // The new vectors have their own HNSW index (migration 0013), which a nearest-neighbour read can use.
    const plan = await owner.connect();
    try {
      await plan.query("BEGIN");
      await plan.query("SET LOCAL enable_seqscan = off");
      const probe = `[${Array.from({ length: 384 }, (_, i) => (i === 0 ? 1 : 0)).join(",")}]`;
      const explained = await plan.query<{ "QUERY PLAN": string }>(
        "EXPLAIN SELECT id FROM memories WHERE embedding_dim = 384 ORDER BY embedding::vector(384) <=> $1::vector(384) LIMIT 10",
        [probe],
      );
      expect(explained.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("memories_embedding_384_hnsw");
    } finally {
      await plan.query("ROLLBACK");
      plan.release();
    }
  }, 240_000);
});
