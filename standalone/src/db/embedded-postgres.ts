import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
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

export interface EmbeddedPostgresOptions {
  /** PostgreSQL's shared_buffers, e.g. "64MB" (default DEFAULT_SHARED_BUFFERS). */
  sharedBuffers?: string | undefined;
}

/**
 * The buffer cache of the embedded database. Every page it has ever held stays resident in the
 * WebAssembly heap (which never shrinks), so it is sized to the working set of the store size
 * standalone is measured at, not to PGlite's 128MB default: at 10,000 memories the HNSW index,
 * the table and its GIN and btree indexes are ~50 MB, and a search or listing misses the cache
 * as rarely at 64MB as at 128MB (docs/adr/0031). A miss is a read from the operating system's
 * page cache, not from disk, so a larger store pays little for outgrowing it.
 */
export const DEFAULT_SHARED_BUFFERS = "64MB";

/** What PostgreSQL accepts for a memory setting, narrowed to whole kB/MB/GB. */
const MEMORY_SIZE = /^[1-9][0-9]{0,6}(kB|MB|GB)$/;

/**
 * PostgreSQL compiled to WebAssembly (PGlite) with pgvector, persisted in a directory and served
 * on a loopback socket so the memory and search services use exactly the code paths they use
 * against a real server.
 *
 * Durability is PGlite's: it runs with fsync off, and a commit returns once its WAL has been
 * written to the operating system (synchronous_commit stays on). An acknowledged write therefore
 * survives the process crashing or being killed; it is not protected against the machine losing
 * power before the operating system flushes its cache.
 */
export async function startEmbeddedPostgres(dataDir: string, options: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgres> {
  const sharedBuffers = options.sharedBuffers ?? DEFAULT_SHARED_BUFFERS;
  if (!MEMORY_SIZE.test(sharedBuffers))
    throw new Error(`shared buffers must be a size such as 64MB (a whole number of kB, MB or GB), got ${JSON.stringify(sharedBuffers)}`);
  mkdirSync(dataDir, { recursive: true });
  // PGlite's own start parameters (single-user mode, no parallel workers, …) plus ours.
  const startParams = [...PGlite.defaultStartParams, "-c", `shared_buffers=${sharedBuffers}`];
  if (!existsSync(join(dataDir, "PG_VERSION"))) await createClusterInWorker(dataDir, startParams);
  const db = await PGlite.create({ dataDir, extensions: { vector }, startParams });
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

/**
 * Runs initdb for a new data directory on a worker thread that ends when it is done. PGlite
 * creates a new cluster with a second, temporary instance and copies it over as a tarball; in the
 * process that opens the database, that instance's WebAssembly memory and the tarball (~400 MB
 * together) stay resident until a full garbage collection that may not come for hours. A thread
 * that exits gives all of it back at once, so a first start ends up as small as a restart.
 */
async function createClusterInWorker(dataDir: string, startParams: readonly string[]): Promise<void> {
  const worker = new Worker(
    // Only dynamic imports: an eval'd worker runs as CommonJS or as a module depending on how its
    // process was started (--input-type), and import() works in both.
    `import("node:worker_threads").then(async ({ workerData }) => {
       const { PGlite } = await import(workerData.pglite);
       const db = await PGlite.create({ dataDir: workerData.dataDir, startParams: workerData.startParams });
       await db.close();
     });`,
    { eval: true, workerData: { pglite: import.meta.resolve("@electric-sql/pglite"), dataDir, startParams } },
  );
  await new Promise<void>((resolve, reject) => {
    worker.once("error", reject);
    worker.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`creating the embedded database exited with code ${code}`))));
  });
}
