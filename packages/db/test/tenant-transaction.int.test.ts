import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/support/database.js";
import { createPool, withRole, withTenant, type Pool } from "../src/index.js";

// A role of our own (no BYPASSRLS): the transaction switches to it like the services do.
const ROLE = "tenant_txn_probe";

describe("withTenant opens its transaction in one batch", () => {
  let db: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    db = await createTestDatabase("tenanttxn");
    pool = createPool({ connectionString: db.url, max: 1, applicationName: "db-test" });
    await pool.query(`DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${ROLE}') THEN CREATE ROLE ${ROLE} NOLOGIN; END IF; END $$`);
    await pool.query(`GRANT ${ROLE} TO CURRENT_USER`);
  });

  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  const probe = `SELECT current_user AS "user", current_setting('app.tenant_id', true) AS tenant,
    current_setting('hnsw.iterative_scan', true) AS scan, current_setting('transaction_read_only') AS ro,
    current_setting('transaction_isolation') AS iso, current_setting('app.note', true) AS note`;

  it("binds role, tenant, mode and extra settings, and none of them outlives the transaction", async () => {
    const tenantId = randomUUID();
    const inside = await withTenant(
      pool,
      { role: ROLE, tenantId, readOnly: true, snapshot: true, settings: { "app.note": "it's; DROP TABLE x" } },
      async (c) => (await c.query(probe)).rows[0],
    );
    expect(inside).toEqual({ user: ROLE, tenant: tenantId, scan: null, ro: "on", iso: "repeatable read", note: "it's; DROP TABLE x" });
    // max 1: the same connection, back in the pool.
    const after = (await pool.query(probe)).rows[0];
    expect(after.user).not.toBe(ROLE);
    expect(after.tenant ?? "").toBe("");
    expect(after.note ?? "").toBe("");
    expect(after.ro).toBe("off");
  });

  it("a read-write transaction without snapshot uses the defaults", async () => {
    const inside = await withTenant(pool, { role: ROLE, tenantId: randomUUID() }, async (c) => (await c.query(probe)).rows[0]);
    expect(inside.ro).toBe("off");
    expect(inside.iso).toBe("read committed");
  });

  it("withRole binds no tenant", async () => {
    const inside = await withRole(pool, ROLE, async (c) => (await c.query(probe)).rows[0]);
    expect(inside.user).toBe(ROLE);
    expect(inside.tenant ?? "").toBe("");
  });

  it("refuses values it cannot interpolate safely, before touching the database", async () => {
    let ran = false;
    const work = async () => {
      ran = true;
    };
    await expect(withTenant(pool, { role: ROLE, tenantId: "x'; SELECT 1; --" }, work)).rejects.toThrow(/not a UUID/);
    await expect(withTenant(pool, { role: ROLE, tenantId: randomUUID(), settings: { "bad name; SELECT 1": "v" } }, work)).rejects.toThrow(
      /unsafe setting name/,
    );
    await expect(withTenant(pool, { role: "Robert'); DROP", tenantId: randomUUID() }, work)).rejects.toThrow(/unsafe SQL identifier/);
    expect(ran).toBe(false);
  });

  it("a failing statement rolls the whole transaction back and frees the connection", async () => {
    await expect(withTenant(pool, { role: ROLE, tenantId: randomUUID() }, (c) => c.query("SELECT 1/0"))).rejects.toThrow(/division by zero/);
    expect((await pool.query("SELECT 1 AS one")).rows[0].one).toBe(1);
  });
});
