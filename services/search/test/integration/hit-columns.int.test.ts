/**
 * What HIT_COLUMNS reads must match what JavaScript would make of the stored row:
 * - recordedAt is printed by the database, never parsed into a Date first: it must read exactly as
 *   Date.toISOString() prints the Date pg answers for the column, whatever the session's time zone
 *   and however many microseconds the instant holds;
 * - contentLength counts UTF-16 code units, as get_memories and the memory resource do
 *   (content.length), not the code points PostgreSQL counts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "@3ngram/db";
import { createTestDatabase, type TestDatabase } from "../../../../test/support/database.js";
import { HIT_COLUMNS } from "../../src/db/eligibility.js";

describe("HIT_COLUMNS", () => {
  let db: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    db = await createTestDatabase("hit_columns");
    pool = createPool({ connectionString: db.url, max: 1, applicationName: "search-test" });
  });

  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  it("reads recordedAt as the column's Date printed by toISOString, the microseconds cut", async () => {
    const instants = [
      "2026-12-03 07:00:12.123456+00",
      "2026-01-31 23:59:59.999999+00",
      "1999-12-31 00:00:00+00",
      "2026-06-01 12:00:00.5+00",
      "2026-03-29 01:30:00.0009+00",
    ];
    for (const zone of ["UTC", "Europe/Lisbon", "America/St_Johns"]) {
      await pool.query(`SET TIME ZONE '${zone}'`);
      const { rows } = await pool.query<{ recordedAt: string; at: Date }>(
        `SELECT ${HIT_COLUMNS()}, m.recorded_at AS at
           FROM (SELECT gen_random_uuid() AS id, 'note' AS memory_type, 'topic' AS topic, 'content' AS content, 'scope' AS scope,
                        NULL::text AS project, t AS recorded_at FROM unnest($1::timestamptz[]) AS t) m`,
        [instants],
      );
      expect(rows).toHaveLength(instants.length);
      for (const row of rows) expect(row.recordedAt).toBe(row.at.toISOString());
    }
  });

  it("counts contentLength in UTF-16 code units and reads the head of the content", async () => {
    const contents = [
      "plain ASCII",
      "",
      "accents café, naïve: two bytes each, one unit each",
      "an emoji 😀 is two units",
      "😀".repeat(800),
      "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 mathematical letters, ü and 中文 between them",
      "x".repeat(5000),
    ];
    const { rows } = await pool.query<{ content: string; contentHead: string; contentLength: number }>(
      `SELECT ${HIT_COLUMNS()}, m.content
         FROM (SELECT gen_random_uuid() AS id, 'note' AS memory_type, 'topic' AS topic, c AS content, 'scope' AS scope,
                      NULL::text AS project, now() AS recorded_at, n FROM unnest($1::text[]) WITH ORDINALITY AS u(c, n)) m
        ORDER BY m.n`,
      [contents],
    );
    expect(rows.map((r) => r.content)).toEqual(contents);
    for (const row of rows) {
      expect(row.contentLength).toBe(row.content.length);
      // The head is the first 700 characters (code points), enough for a 600-unit excerpt.
      expect(row.contentHead).toBe([...row.content].slice(0, 700).join(""));
    }
  });
});
