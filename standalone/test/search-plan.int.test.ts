/**
 * Standalone search does not plan its candidate statement on every search: with its limits in
 * the text, PostgreSQL settles on the statement's generic plan after its first few executions
 * (ADR-0031), for the vector leg standalone uses (the in-process index's nominations, ADR-0037).
 * PGlite serves every connection from one session, so the services' prepared statements are
 * visible from any connection.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "@3ngram/db";
import { connectMcp, type McpConnection } from "../../test/support/mcp.js";
import { startStandalone, type RunningStandalone } from "../src/standalone.js";

const dir = mkdtempSync(`${tmpdir()}/3ngram-search-plan-`);
let running: RunningStandalone;
let mcp: McpConnection;
let pool: Pool;

async function start(): Promise<void> {
  running = await startStandalone({ dataDir: dir, port: 0, host: "127.0.0.1", logLevel: "silent", env: { EMBEDDINGS_PROVIDER: "hashing" } });
  mcp = await connectMcp(running.mcpUrl, running.identity.apiKey, { modern: true });
  pool = createPool({ connectionString: running.databaseUrl, max: 1, applicationName: "search-plan-test" });
}

beforeAll(start, 60_000);

afterAll(async () => {
  await pool.end();
  await mcp.close();
  await running.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("standalone search plans", () => {
  it("runs the candidate statement on a reused plan once it has been executed a few times", async () => {
    for (const [i, topic] of ["kiwi orchard pruning", "tidal lagoon survey", "glacier melt notes"].entries()) {
      await mcp.call("remember", { memoryType: "fact", topic, content: `Observation ${i}: ${topic} recorded for the plan test.` });
    }
    // Enough rows, and statistics saying so, for the planner's cost of a plan that cannot see its
    // LIMIT (a tenth of the table) to exceed a per-search plan's: copies of those memories.
    await pool.query(`INSERT INTO memories (id, tenant_id, memory_type, topic, content, scope, project, tags, status, content_hash,
        embedding, embedding_model, embedding_dim, valid_from, recorded_at, created_by)
      SELECT gen_random_uuid(), tenant_id, memory_type, topic || ' ' || g, content || ' copy ' || g, scope, project, tags, status,
        md5(content || g), embedding, embedding_model, embedding_dim, valid_from, recorded_at - g * interval '1 second', created_by
        FROM memories, generate_series(1, 1000) g`);
    await pool.query("ANALYZE memories");
    // The copies bypassed the memory service, so no event announces them to the in-process vector
    // index standalone loaded when it started: a restart loads it again, copies included.
    await pool.end();
    await mcp.close();
    await running.close();
    await start();
    const queries = ["kiwi orchard", "tidal lagoon", "glacier melt"];
    const hits: number[] = [];
    const search = async (i: number) => {
      const out = await mcp.call<{ hits: Array<{ topic: string }> }>("search", { query: queries[i % 3]!, limit: 5 });
      hits.push(out.hits.length);
    };
    const plans = async () =>
      (
        await pool.query<{ nominated: boolean; generic: number; custom: number }>(
          `SELECT statement LIKE '%WITH ORDINALITY%' AS nominated, generic_plans::int AS generic, custom_plans::int AS custom
             FROM pg_prepared_statements WHERE statement LIKE '%WITH q AS (SELECT%'`,
        )
      ).rows;
    // Standalone's vector leg comes from the in-process index once its load at start has ended
    // (its statement checks nominated ids); any search before that walks the HNSW index.
    for (let i = 0; !(await plans()).some((p) => p.nominated); i++) {
      if (i >= 200) throw new Error("the in-process vector index never answered");
      await search(i);
    }
    for (let i = 0; i < 10; i++) await search(i);
    expect(hits.every((n) => n > 0)).toBe(true);
    const seen = await plans();
    // PostgreSQL's plan cache: five custom plans, then the generic plan whenever it is no dearer.
    for (const text of seen) expect(text.custom).toBeLessThanOrEqual(5 * 4);
    const nominated = seen.filter((p) => p.nominated);
    expect(nominated.reduce((n, p) => n + p.custom, 0)).toBeGreaterThan(0);
    expect(nominated.reduce((n, p) => n + p.generic, 0)).toBeGreaterThan(0);
  }, 90_000);
});
