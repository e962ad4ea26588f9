/**
 * A user's ./data from before a change of the default embedding model, opened by a server that
 * runs the new model: it answers searches at once and re-embeds every memory by itself, in the one
 * process, on the in-process queue, with nobody calling a command. The data directory is made as
 * today's build leaves it: memories embedded by the old model, and the schema without migration
 * 0013 (its 384-dimension index is dropped and its record removed before the restart), so the
 * restarted server also migrates it. The hashing embedder stands in for both models (hashing-512,
 * then hashing-384) to keep the test quick and deterministic; the mechanism is the same for any model.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createPool } from "@3ngram/db";
import { connectMcp } from "../../support/mcp.js";
import { embeddingProgress, rareWord, writeRareWordNotes, type SearchOut } from "../../support/model-change.js";
import { waitFor, type ServiceProcess } from "../../support/processes.js";
import { startStandalone, type StandaloneServer } from "../../support/standalone.js";

/** More than one backfill run looks at (160), so re-embedding takes a chain of runs. */
const MEMORIES = 250;
const dataDir = mkdtempSync(join(tmpdir(), "3ngram-standalone-model-change-"));
const running: ServiceProcess[] = [];

async function startServer(dimensions: number): Promise<StandaloneServer> {
  const server = await startStandalone(dataDir, {
    EMBEDDINGS_PROVIDER: "hashing",
    EMBEDDINGS_DIMENSIONS: String(dimensions),
    RATE_LIMIT_USER_PER_MINUTE: "100000",
    RATE_LIMIT_KEY_PER_MINUTE: "100000",
    RATE_LIMIT_IP_PER_MINUTE: "100000",
  });
  running.push(server.proc);
  return server;
}

afterAll(async () => {
  for (const proc of running) await proc.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("standalone server: a data directory written with another embedding model", () => {
  it("answers searches at once and finishes re-embedding by itself", async () => {
    const first = await startServer(512);
    const ids = await writeRareWordNotes(first.url, first.apiKey, MEMORIES);
    // Back to the schema today's build leaves: no 384-dimension index, migration 0013 never run.
    const before = createPool({ connectionString: first.databaseUrl, max: 1, applicationName: "3ngram-e2e" });
    try {
      await before.query("DROP INDEX memories_embedding_384_hnsw");
      await before.query("DELETE FROM schema_migrations WHERE version = '0013_embedding_384_index'");
    } finally {
      await before.end();
    }
    expect(await first.proc.stop()).toBe(0);

    const second = await startServer(384);
    const progress = () => embeddingProgress(second.url, second.apiKey);
    const mcp = await connectMcp(second.mcpUrl, second.apiKey);
    try {
      // At once: every memory is found, re-embedded yet or not (the lexical leg finds the others).
      for (const target of [3, 137, 249]) {
        const found = await mcp.call<SearchOut>("search", { query: `${rareWord(target)} project` });
        expect(found.hits[0]?.id, `memory ${target}`).toBe(ids[target]);
        expect(found.coverage.abstained, `memory ${target}`).toBe(false);
      }
      // How many are re-embedded by now depends on timing, which the test leaves alone (the
      // distributed scenario starts its consolidator late to see the whole count pending).
      const start = await progress();
      expect(start).toMatchObject({ model: "hashing-384", dimensions: 384 });
      expect(start.embedded + start.pending).toBe(MEMORIES);

      await waitFor("re-embedding to finish", async () => (await progress()).pending === 0, 120_000, second.proc);
      expect(await progress()).toEqual({ model: "hashing-384", dimensions: 384, embedded: MEMORIES, pending: 0 });
      const after = await mcp.call<SearchOut>("search", { query: `${rareWord(137)} project` });
      expect(after.hits[0]?.id).toBe(ids[137]);
      expect(after.coverage.legs.find((l) => l.leg === "vector")!.candidates).toBeGreaterThan(0);
    } finally {
      await mcp.close();
    }

    const db = createPool({ connectionString: second.databaseUrl, max: 1, applicationName: "3ngram-e2e" });
    try {
      const models = await db.query<{ model: string; n: number }>(
        "SELECT embedding_model AS model, count(*)::int AS n FROM memories WHERE status = 'active' AND valid_to IS NULL GROUP BY 1",
      );
      expect(models.rows).toEqual([{ model: "hashing-384", n: MEMORIES }]);
      // The restart ran the migration the directory lacked.
      const index = await db.query("SELECT 1 FROM pg_indexes WHERE indexname = 'memories_embedding_384_hnsw'");
      expect(index.rowCount).toBe(1);
    } finally {
      await db.end();
    }
    expect(await second.proc.stop()).toBe(0);
  }, 240_000);
});
