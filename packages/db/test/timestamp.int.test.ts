/**
 * A timestamptz read as text and parsed with parseTimestamptz is the Date a query answers for the
 * column itself, whatever the session's time zone prints.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/support/database.js";
import { createPool, parseTimestamptz, type Pool } from "../src/index.js";

describe("parseTimestamptz", () => {
  let db: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    db = await createTestDatabase("timestamptz");
    pool = createPool({ connectionString: db.url, max: 1, applicationName: "db-test" });
  });

  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  it("answers the Date pg parses for the column, microseconds and offsets included", async () => {
    const instants = ["2026-12-03 07:00:12.123456+00", "2026-01-31 23:59:59.999999+00", "1999-12-31 00:00:00+00", "2026-06-01 12:00:00.5+00"];
    for (const zone of ["UTC", "Europe/Lisbon", "America/St_Johns"]) {
      await pool.query(`SET TIME ZONE '${zone}'`);
      const { rows } = await pool.query<{ at: Date; text: string }>("SELECT t AS at, t::text AS text FROM unnest($1::timestamptz[]) AS t", [instants]);
      for (const row of rows) expect(parseTimestamptz(row.text).getTime()).toBe(row.at.getTime());
    }
    await pool.query("RESET TIME ZONE");
  });
});
