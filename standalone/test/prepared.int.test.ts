/**
 * Named prepared statements on the embedded database, where every pooled connection shares ONE
 * PGlite session: concurrent connections must not claim the same name, and connections that close
 * and reopen must not pile statements up in the session.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, withClient, withPreparedStatements } from "@3ngram/db";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "../src/db/embedded-postgres.js";

const dir = mkdtempSync(join(tmpdir(), "3ngram-prepared-"));
let postgres: EmbeddedPostgres;

beforeAll(async () => {
  postgres = await startEmbeddedPostgres(dir);
});

afterAll(async () => {
  await postgres.close();
  rmSync(dir, { recursive: true, force: true });
});

const statements = async () => Number((await postgres.db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_prepared_statements")).rows[0]!.n);

describe("prepared statements in the shared embedded session", () => {
  it("several connections prepare one text side by side, and reopened connections reuse their slots", async () => {
    const texts = ["SELECT $1::int + 1 AS n", "SELECT $1::int * 2 AS n"];
    for (let generation = 0; generation < 3; generation++) {
      const pool = createPool({ connectionString: postgres.url, max: 3, applicationName: "prepared-test" });
      const closed: Promise<unknown>[] = [];
      pool.on("connect", (client) => closed.push(new Promise((resolve) => client.once("end", resolve))));
      const answers = await Promise.all(
        [1, 2, 3].map((value) =>
          withClient(pool, async (client) => {
            const db = withPreparedStatements(client);
            const out: number[] = [];
            for (const text of texts) out.push((await db.query<{ n: number }>(text, [value])).rows[0]!.n);
            // Hold the connection a moment so the three are checked out together.
            await new Promise((resolve) => setTimeout(resolve, 20));
            return out;
          }),
        ),
      );
      expect(answers).toEqual([
        [2, 2],
        [3, 4],
        [4, 6],
      ]);
      await pool.end();
      // Every connection of this generation has closed (and given its slot back) before the next opens.
      await Promise.all(closed);
    }
    // Three connections at a time, two texts each: the closed generations' statements were dropped.
    // (Without the sweep there would be 18; without distinct names per connection, a duplicate-name error.)
    expect(await statements()).toBeLessThanOrEqual(6);
  });
});
