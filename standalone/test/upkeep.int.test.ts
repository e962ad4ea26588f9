/**
 * The embedded database's upkeep: statistics follow the data (PGlite has no autovacuum), and its
 * rounds, interleaved with other connections' statements and transactions, fail none of them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "@3ngram/db";
import { createLogger } from "@3ngram/runtime";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "../src/db/embedded-postgres.js";
import { startUpkeep, type Upkeep, type UpkeepRound } from "../src/db/upkeep.js";

const dir = mkdtempSync(join(tmpdir(), "3ngram-upkeep-"));
let postgres: EmbeddedPostgres;
let pool: Pool;
let upkeep: Upkeep;
const log = createLogger({ service: "test", level: "silent" });

beforeAll(async () => {
  postgres = await startEmbeddedPostgres(dir);
  pool = createPool({ connectionString: postgres.url, max: 3, applicationName: "upkeep-test" });
  await pool.query("CREATE TABLE notes (id int PRIMARY KEY, body text)");
  // A long interval: the rounds in these tests are the ones they start.
  upkeep = startUpkeep({ databaseUrl: postgres.url, log, intervalMs: 3_600_000 });
});

afterAll(async () => {
  await upkeep.close();
  await pool.end();
  await postgres.close();
  rmSync(dir, { recursive: true, force: true });
});

const stats = async () =>
  (await pool.query<{ relpages: number; reltuples: number }>("SELECT relpages, reltuples FROM pg_class WHERE relname = 'notes'")).rows[0]!;

describe("embedded database upkeep", () => {
  it("analyses a table once it has grown, and leaves it alone while it has not", async () => {
    await pool.query("INSERT INTO notes SELECT g, repeat('note ', 20) FROM generate_series(1, 5000) g");
    expect((await stats()).reltuples).toBeLessThan(1);
    expect((await upkeep.runOnce()).analysed).toEqual(["notes"]);
    expect(await stats()).toMatchObject({ reltuples: 5000 });
    expect((await upkeep.runOnce({ checkpoint: true })).analysed).toEqual([]);
    await pool.query("INSERT INTO notes SELECT g, repeat('note ', 20) FROM generate_series(5001, 10000) g");
    expect((await upkeep.runOnce()).analysed).toEqual(["notes"]);
    expect(await stats()).toMatchObject({ reltuples: 10000 });
  });

  it("merges the full-text index's pending list, which an ANALYZE of the table leaves in place", async () => {
    await pool.query("CREATE TABLE pages (id int PRIMARY KEY, body tsvector)");
    await pool.query("CREATE INDEX pages_body_idx ON pages USING gin (body)");
    // One row per statement, as the memory service writes: each lands in the pending list.
    for (let i = 0; i < 300; i++) await pool.query("INSERT INTO pages VALUES ($1, to_tsvector('simple', $2))", [i, `word${i} shared text ${i % 7}`]);
    await pool.query("ANALYZE pages");
    const round = await upkeep.runOnce();
    expect(round.mergedPages).toBeGreaterThan(0);
    // Nothing left to merge, and the index still answers.
    expect((await pool.query("SELECT gin_clean_pending_list('pages_body_idx'::regclass) AS pages")).rows[0]).toEqual({ pages: "0" });
    expect((await upkeep.runOnce()).mergedPages).toBe(0);
    await pool.query("SET enable_seqscan = off");
    expect((await pool.query("SELECT id FROM pages WHERE body @@ 'word42'::tsquery")).rows).toEqual([{ id: 42 }]);
    await pool.query("RESET enable_seqscan");
  });

  it("runs its rounds between other connections' statements and transactions, failing none of them", async () => {
    const rounds: Array<Promise<UpkeepRound>> = [];
    for (let i = 0; i < 40; i++) {
      rounds.push(upkeep.runOnce({ checkpoint: i % 10 === 0 }));
      await Promise.all([
        pool.query("SELECT count(*) FROM notes WHERE id > $1", [i]),
        pool.query("INSERT INTO notes SELECT g, 'more' FROM generate_series($1::int, $1::int + 199) g", [20_000 + i * 200]),
        (async () => {
          const client = await pool.connect();
          try {
            await client.query("BEGIN");
            await client.query("UPDATE notes SET body = $1 WHERE id = $2", [`edited ${i}`, i + 1]);
            await client.query("COMMIT");
          } finally {
            client.release();
          }
        })(),
      ]);
    }
    const analysed = (await Promise.all(rounds)).flatMap((r) => r.analysed);
    expect(analysed).toContain("notes");
    expect((await pool.query("SELECT count(*)::int AS n FROM notes")).rows[0]).toEqual({ n: 18000 });
  });
});

describe("embedded database start", () => {
  it("starts with current statistics for what was stored before", async () => {
    const restartDir = mkdtempSync(join(tmpdir(), "3ngram-restart-"));
    try {
      let db = await startEmbeddedPostgres(restartDir);
      await db.db.exec("CREATE TABLE items (id int); INSERT INTO items SELECT generate_series(1, 3000)");
      await db.close();
      db = await startEmbeddedPostgres(restartDir);
      const row = (await db.db.query<{ reltuples: number }>("SELECT reltuples FROM pg_class WHERE relname = 'items'")).rows[0];
      await db.close();
      expect(row).toEqual({ reltuples: 3000 });
    } finally {
      rmSync(restartDir, { recursive: true, force: true });
    }
  });
});
