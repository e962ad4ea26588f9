/**
 * A connection that dies while a request holds it: the server ends the backend (what a restart
 * does to every session, SQLSTATE 57P01) in the middle of a transaction. The request must fail
 * as `unavailable`, the process must not see an unhandled 'error' event, and the pool must hand
 * out a working connection next.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAppError } from "@3ngram/errors";
import pg from "pg";
import { createTestDatabase, type TestDatabase } from "../../../test/support/database.js";
import { createPool, isTransientDatabaseError, withClient, withOwnerTransaction, type Pool } from "../src/index.js";

describe("a connection lost under a request", () => {
  let db: TestDatabase;
  let pool: Pool;
  let killer: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase("connloss");
    pool = createPool({ connectionString: db.url, max: 1, applicationName: "db-connloss" });
    killer = new pg.Client({ connectionString: db.url });
    await killer.connect();
  });

  afterAll(async () => {
    await killer.end();
    await pool.end();
    await db.drop();
  });

  /**
   * Ends the server session under `client` and gives its FATAL message time to arrive while
   * nothing is queued on the connection: that is when node-postgres emits 'error' on the client.
   */
  const endSessionOf = async (client: pg.ClientBase) => {
    const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    await killer.query("SELECT pg_terminate_backend($1)", [rows[0]!.pid]);
    await new Promise((resolve) => setTimeout(resolve, 200));
  };

  it("answers unavailable when the backend is terminated mid-transaction, and the next request works", async () => {
    const failure = await withOwnerTransaction(pool, async (client) => {
      await endSessionOf(client);
      await client.query("SELECT 1");
    }).catch((err: unknown) => err);

    expect(isAppError(failure)).toBe(true);
    expect(failure).toMatchObject({ reason: "unavailable" });
    // max 1: a fresh connection replaced the dead one.
    expect(await withOwnerTransaction(pool, async (c) => (await c.query("SELECT 1 AS one")).rows[0].one)).toBe(1);
  });

  it("answers unavailable when a session connection dies, and releases it", async () => {
    const failure = await withClient(pool, async (client) => {
      await endSessionOf(client);
      await client.query("SELECT 1");
    }).catch((err: unknown) => err);
    expect(failure).toMatchObject({ reason: "unavailable" });
    expect((await pool.query("SELECT 1 AS one")).rows[0].one).toBe(1);
  });

  it("answers unavailable when nothing listens at the address", async () => {
    const dead = createPool({ connectionString: "postgres://postgres@127.0.0.1:1/none", applicationName: "db-dead" });
    try {
      await expect(withOwnerTransaction(dead, async () => 1)).rejects.toMatchObject({ reason: "unavailable" });
    } finally {
      await dead.end();
    }
  });

  it("tells transient failures from statement errors", () => {
    const withCode = (code: string) => Object.assign(new Error("x"), { code });
    expect(isTransientDatabaseError(withCode("57P01"))).toBe(true);
    expect(isTransientDatabaseError(withCode("57P03"))).toBe(true);
    expect(isTransientDatabaseError(withCode("08006"))).toBe(true);
    expect(isTransientDatabaseError(withCode("ECONNREFUSED"))).toBe(true);
    expect(isTransientDatabaseError(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isTransientDatabaseError(new Error("wrapped", { cause: withCode("ECONNRESET") }))).toBe(true);
    expect(isTransientDatabaseError(withCode("22012"))).toBe(false);
    expect(isTransientDatabaseError(withCode("23505"))).toBe(false);
    expect(isTransientDatabaseError(new Error("division by zero"))).toBe(false);
  });
});
