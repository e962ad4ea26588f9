import { mkdirSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";

export interface EmbeddedPostgres {
  /** A postgres:// URL the services' ordinary pg pools connect to. */
  url: string;
  /** The database itself (benchmarks time what runs inside it). */
  db: PGlite;
  close(): Promise<void>;
}

/** Protocol messages that leave an extended-query cycle open until the next Sync. */
const OPENS_CYCLE = new Set(["P", "B", "D", "E", "C", "H", "F"].map((c) => c.charCodeAt(0)));
const ENDS_CYCLE = new Set(["S", "Q"].map((c) => c.charCodeAt(0)));

/**
 * PostgreSQL compiled to WebAssembly (PGlite) with pgvector, persisted in a directory and served
 * on a loopback socket so the memory and search services use exactly the code paths they use
 * against a real server.
 */
export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create({ dataDir, extensions: { vector } });
  // The socket server hands each client message to the one backend in turn and keeps a
  // connection's messages together only while a transaction block is open. An extended-protocol
  // statement (Parse, Bind, Execute … Sync) is a transaction of its own until its Sync, so another
  // connection's message could run inside it (and a VACUUM there fails, taking the statement with
  // it). Counting an open cycle as a transaction keeps each cycle whole.
  let cycleOpen = false;
  const exec = db.execProtocolRawStream.bind(db);
  db.execProtocolRawStream = (message, options) => {
    const type = message[0] ?? 0;
    if (OPENS_CYCLE.has(type)) cycleOpen = true;
    else if (ENDS_CYCLE.has(type)) cycleOpen = false;
    return exec(message, options);
  };
  const inTransactionBlock = db.isInTransaction.bind(db);
  db.isInTransaction = () => cycleOpen || inTransactionBlock();
  // Several pools share the one backend; it serialises transactions, which is fine for one user.
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 32 });
  await server.start();
  const address = server.getServerConn();
  return {
    url: `postgres://postgres@${address}/postgres`,
    db,
    async close() {
      await server.stop();
      await db.close();
    },
  };
}
