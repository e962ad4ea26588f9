/**
 * A read-only transaction answers without waiting for its COMMIT; a read-write one waits. The
 * server is the real test database behind a TCP relay that can hold back the server's answer to
 * COMMIT, so whether a transaction waited for it is seen directly, with no timing involved.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/support/database.js";
import { createPool, withTenant, type Pool } from "../src/index.js";
import { messageEnd, startPgRelay } from "./support/pg-relay.js";

// A role of our own (no BYPASSRLS): the transaction switches to it like the services do.
const ROLE = "read_only_commit_probe";

/** CommandComplete ('C') whose tag is COMMIT: the server's answer to a COMMIT. */
function isCommitComplete(message: Buffer): boolean {
  return message[0] === "C".charCodeAt(0) && message.subarray(5, 11).toString("latin1") === "COMMIT";
}

/**
 * While held, the server's answer to a COMMIT (and everything after it on that connection) waits
 * in the relay until release().
 */
async function commitHoldingRelay(databaseUrl: string) {
  let holding = false;
  const waiting: (() => void)[] = [];
  const relay = await startPgRelay(databaseUrl, ({ client }) => {
    let pending = Buffer.alloc(0);
    let held = false;
    return (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      if (held) return;
      // Pass on whole messages until a held COMMIT answer.
      let at = 0;
      for (let end = messageEnd(pending, at); end !== undefined; at = end, end = messageEnd(pending, at)) {
        if (holding && isCommitComplete(pending.subarray(at, end))) {
          held = true;
          waiting.push(() => {
            held = false;
            client.write(pending);
            pending = Buffer.alloc(0);
          });
          break;
        }
      }
      client.write(pending.subarray(0, at));
      pending = pending.subarray(at);
    };
  });
  return {
    ...relay,
    hold: () => (holding = true),
    /** How many COMMIT answers are held now. */
    held: () => waiting.length,
    /** Stops holding and lets every held answer through; answers how many there were. */
    release: () => {
      holding = false;
      const released = waiting.splice(0);
      for (const pass of released) pass();
      return released.length;
    },
  };
}

describe("COMMIT of a tenant transaction", () => {
  let db: TestDatabase;
  let relay: Awaited<ReturnType<typeof commitHoldingRelay>>;
  let pool: Pool;

  beforeAll(async () => {
    db = await createTestDatabase("readonlycommit");
    relay = await commitHoldingRelay(db.url);
    // One connection: the transaction after a held COMMIT runs on the same one.
    pool = createPool({ connectionString: relay.url, max: 1, applicationName: "db-read-only-commit" });
    await pool.query(`DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${ROLE}') THEN CREATE ROLE ${ROLE} NOLOGIN; END IF; END $$`);
    await pool.query(`GRANT ${ROLE} TO CURRENT_USER`);
  });

  afterAll(async () => {
    relay.release();
    await pool.end();
    await relay.close();
    await db.drop();
  });

  /** Until the relay holds a COMMIT's answer, and a little longer, so anything it would unblock has had its turn. */
  async function commitHeld(): Promise<void> {
    while (relay.held() === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  const probe = `SELECT current_setting('app.tenant_id', true) AS tenant, current_setting('transaction_read_only') AS ro`;

  it("a read-only transaction answers while its COMMIT is still unanswered, and the next one runs after it", async () => {
    const tenantId = randomUUID();
    relay.hold();
    const inside = await withTenant(pool, { role: ROLE, tenantId, readOnly: true }, async (c) => (await c.query(probe)).rows[0]);
    expect(inside).toEqual({ tenant: tenantId, ro: "on" });
    // The same connection, its COMMIT's answer held: the next query waits behind it, and then runs
    // outside that transaction.
    let nextAnswered = false;
    const next = pool.query(probe).then((result) => {
      nextAnswered = true;
      return result;
    });
    await commitHeld();
    expect(nextAnswered).toBe(false);
    expect(relay.release()).toBe(1);
    const after = (await next).rows[0];
    expect(after.tenant ?? "").toBe("");
    expect(after.ro).toBe("off");
  });

  it("a read-write transaction waits for its COMMIT's answer", async () => {
    relay.hold();
    let answered = false;
    const done = withTenant(pool, { role: ROLE, tenantId: randomUUID() }, async (c) => (await c.query("SELECT 1 AS one")).rows[0]).then((row) => {
      answered = true;
      return row;
    });
    await commitHeld();
    expect(answered).toBe(false);
    expect(relay.release()).toBe(1);
    await expect(done).resolves.toEqual({ one: 1 });
  });
});
