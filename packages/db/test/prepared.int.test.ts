/**
 * Named prepared statements under row-level security: one statement, prepared once on one pooled
 * connection and run past the point where PostgreSQL may switch to a cached generic plan, still
 * shows each tenant only its own rows.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/support/database.js";
import { createPool, withPreparedStatements, withTenant, type Pool } from "../src/index.js";

// A role of our own (no BYPASSRLS): the transaction switches to it like the services do.
const ROLE = "prepared_rls_probe";

describe("prepared statements keep tenants apart", () => {
  let db: TestDatabase;
  let pool: Pool;
  const tenants = [randomUUID(), randomUUID()];

  beforeAll(async () => {
    db = await createTestDatabase("preparedrls");
    // max 1: every transaction below runs on the same connection, so the statement is reused.
    pool = createPool({ connectionString: db.url, max: 1, applicationName: "db-test" });
    await pool.query(`DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${ROLE}') THEN CREATE ROLE ${ROLE} NOLOGIN; END IF; END $$`);
    await pool.query(`GRANT ${ROLE} TO CURRENT_USER`);
    await pool.query(`CREATE TABLE notes (tenant_id uuid NOT NULL, body text NOT NULL);
      ALTER TABLE notes ENABLE ROW LEVEL SECURITY;
      CREATE POLICY notes_tenant ON notes USING (tenant_id = current_setting('app.tenant_id', true)::uuid);
      GRANT SELECT ON notes TO ${ROLE}`);
    await pool.query("INSERT INTO notes VALUES ($1, 'first a'), ($1, 'second a'), ($2, 'only b')", tenants);
  });

  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  // No tenant predicate: only row-level security narrows it.
  const text = "SELECT body FROM notes WHERE body <> $1 ORDER BY body";

  it("each tenant sees only its rows through the same prepared statement, custom plans and generic", async () => {
    const seen: string[][] = [];
    for (let round = 0; round < 8; round++) {
      for (const tenantId of tenants) {
        const bodies = await withTenant(pool, { role: ROLE, tenantId, readOnly: true }, async (client) => {
          const { rows } = await withPreparedStatements(client).query<{ body: string }>(text, [""]);
          return rows.map((r) => r.body);
        });
        seen.push(bodies);
      }
    }
    for (let i = 0; i < seen.length; i++) expect(seen[i]).toEqual(i % 2 === 0 ? ["first a", "second a"] : ["only b"]);
    // One statement on the one connection, executed by both tenants in turn.
    const { rows } = await pool.query<{ name: string; calls: string }>(
      "SELECT name, (generic_plans + custom_plans)::text AS calls FROM pg_prepared_statements WHERE statement = $1",
      [text],
    );
    expect(rows).toHaveLength(1);
    expect(Number(rows[0]!.calls)).toBe(16);
  });

  it("unparameterised queries pass through unnamed", async () => {
    const rows = await withTenant(pool, { role: ROLE, tenantId: tenants[1]!, readOnly: true }, async (client) => {
      return (await withPreparedStatements(client).query<{ body: string }>("SELECT body FROM notes")).rows;
    });
    expect(rows).toEqual([{ body: "only b" }]);
  });
});
