/**
 * A connection the server ends in the same breath as it opens it: what a new session sees when
 * PostgreSQL shuts down (a restart) just as the pool connects. The server's "ready" and its FATAL
 * 57P01 arrive in one read, node-postgres handles both in one go, and the pool hands the client
 * out between them. Whoever checks it out must already be listening for 'error' by then; a
 * listener added after an `await` comes too late, and the process sees an unhandled 'error'
 * (the fault suite caught one during a database restart).
 *
 * The server here is the real test database behind a small TCP relay that appends the FATAL
 * message to the server's first ReadyForQuery, as a shutting-down server sends it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/support/database.js";
import { createPool, withClient, withOwnerTransaction } from "../src/index.js";
import { messageEnd, startPgRelay, type PgRelay } from "./support/pg-relay.js";

/** ErrorResponse: FATAL, SQLSTATE 57P01, as PostgreSQL words it on shutdown. */
function adminShutdownMessage(): Buffer {
  const field = (code: string, text: string) => Buffer.concat([Buffer.from(code), Buffer.from(text), Buffer.from([0])]);
  const body = Buffer.concat([
    field("S", "FATAL"),
    field("V", "FATAL"),
    field("C", "57P01"),
    field("M", "terminating connection due to administrator command"),
    Buffer.from([0]),
  ]);
  const header = Buffer.alloc(5);
  header.write("E", 0);
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

/** The server's first ReadyForQuery reaches the client with the FATAL message after it, in one write, then the connection ends. */
function shutdownOnReadyRelay(databaseUrl: string): Promise<PgRelay> {
  return startPgRelay(databaseUrl, ({ client, server }) => {
    let pending = Buffer.alloc(0);
    return (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      // Walk whole messages up to the first 'Z'.
      for (let at = 0, end = messageEnd(pending, at); end !== undefined; at = end, end = messageEnd(pending, at)) {
        if (pending[at] === "Z".charCodeAt(0)) {
          client.end(Buffer.concat([pending.subarray(0, end), adminShutdownMessage()]));
          server.destroy();
          return;
        }
      }
    };
  });
}

describe("a connection ended as it opens", () => {
  let db: TestDatabase;
  let relay: PgRelay;
  const escaped: unknown[] = [];
  const record = (err: unknown) => escaped.push(err);

  beforeAll(async () => {
    db = await createTestDatabase("checkoutrace");
    relay = await shutdownOnReadyRelay(db.url);
    process.on("uncaughtException", record);
  });

  afterAll(async () => {
    process.removeListener("uncaughtException", record);
    await relay.close();
    await db.drop();
  });

  it("fails a transaction as unavailable, with no 'error' event escaping to the process", async () => {
    const pool = createPool({ connectionString: relay.url, applicationName: "db-checkout-race" });
    try {
      for (let round = 0; round < 5; round++) {
        await expect(withOwnerTransaction(pool, async (client) => (await client.query("SELECT 1")).rowCount)).rejects.toMatchObject({
          reason: "unavailable",
        });
      }
      await expect(withClient(pool, async (client) => (await client.query("SELECT 1")).rowCount)).rejects.toMatchObject({ reason: "unavailable" });
      // An escaped 'error' surfaces on a later turn of the event loop.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(escaped).toEqual([]);
    } finally {
      await pool.end();
    }
  });
});
