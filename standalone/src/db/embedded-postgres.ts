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

/**
 * PostgreSQL compiled to WebAssembly (PGlite) with pgvector, persisted in a directory and served
 * on a loopback socket so the memory and search services use exactly the code paths they use
 * against a real server.
 */
export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create({ dataDir, extensions: { vector } });
  // PGlite has no autovacuum: before anyone connects (so nothing can interleave with it), clear
  // dead rows and refresh statistics; while running, standalone/src/db/upkeep.ts keeps them current.
  await db.exec("VACUUM (ANALYZE)");
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
