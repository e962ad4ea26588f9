import { chmodSync, existsSync, mkdirSync } from "node:fs";
import type { Server } from "node:net";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite-pgvector";
import { SharedSession } from "./shared-session.js";
import { prepareSocketDir, socketUrl } from "./socket-dir.js";
import { createWireListener, type WireListener } from "./wire-server.js";

export interface EmbeddedPostgres {
  /** The postgres:// URL of the Unix socket (no port, no password) the services' pg pools connect to. */
  url: string;
  /** The directory holding that socket: the one asked for, or a temporary one when its path was too long. */
  socketDir: string;
  /** The password-guarded loopback URL for tools (without the password), when a tool port was asked for. */
  toolUrl?: string;
  /** The database itself (benchmarks time what runs inside it). */
  db: PGlite;
  close(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** PostgreSQL's shared_buffers, e.g. "48MB" (default DEFAULT_SHARED_BUFFERS). */
  sharedBuffers?: string | undefined;
  /** The directory for the Unix socket (made 0700); default a fresh temporary one. */
  socketDir?: string | undefined;
  /** Also listen on this loopback TCP port (0: any free one) for tools that cannot use the socket, asking for the password. */
  toolPort?: { port: number; password: string } | undefined;
}

/**
 * What a tool on the TCP port may do with the one session (docs/adr/0041): keep it inside a
 * transaction for a second between statements, five in all; four connections at a time.
 */
const TOOL_LIMITS = { toolIdleMs: 1_000, toolHoldMs: 5_000 };
const TOOL_MAX_CONNECTIONS = 4;
/** PostgreSQL's own limit on one message; a tool gets far less before it must end an exchange. */
const LOCAL_MAX_UNIT_BYTES = 1024 * 1024 * 1024;
const TOOL_MAX_UNIT_BYTES = 16 * 1024 * 1024;

/**
 * The buffer cache of the embedded database. PGlite zero-fills its shared memory when it starts,
 * so the whole cache is resident from the first second, in the WebAssembly heap, which never
 * shrinks. Searches no longer walk the HNSW index (standalone scans the tenant's vectors in the
 * search process); writes still insert into the HNSW index. A miss is a read from the operating
 * system's page cache, not from disk: at 10,000 memories 16MB answered writes and searches as fast
 * as 32MB did, in 16 MB less (docs/adr/0047; 32MB before, docs/adr/0043; 64MB, docs/adr/0031).
 */
export const DEFAULT_SHARED_BUFFERS = "16MB";

/** What PostgreSQL accepts for a memory setting, narrowed to whole kB/MB/GB. */
const MEMORY_SIZE = /^[1-9][0-9]{0,6}(kB|MB|GB)$/;

/**
 * PostgreSQL compiled to WebAssembly (PGlite) with pgvector, persisted in a directory and served
 * on a Unix socket only its owner can reach (no network port unless a tool port is asked for), so
 * the memory and search services use exactly the code paths they use against a real server.
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
  // Several pools share the one backend, taking turns by whole exchanges (shared-session.ts).
  const session = new SharedSession(db, TOOL_LIMITS);
  const socketDir = prepareSocketDir(options.socketDir);
  const listeners: WireListener[] = [];
  const close = async () => {
    for (const listener of listeners) await listener.close();
    await session.close();
    socketDir.remove();
    await db.close();
  };
  try {
    const local = createWireListener(session, { kind: "local", maxConnections: 32, maxUnitBytes: LOCAL_MAX_UNIT_BYTES });
    listeners.push(local);
    await listen(local.server, socketDir.path);
    // The directory already keeps other users out; the socket's own mode says the same to anyone looking.
    chmodSync(socketDir.path, 0o600);
    let toolUrl: string | undefined;
    if (options.toolPort) {
      const tools = createWireListener(session, {
        kind: "tool",
        password: options.toolPort.password,
        maxConnections: TOOL_MAX_CONNECTIONS,
        maxUnitBytes: TOOL_MAX_UNIT_BYTES,
      });
      listeners.push(tools);
      const port = await listen(tools.server, { host: "127.0.0.1", port: options.toolPort.port });
      toolUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
    }
    return { url: socketUrl(socketDir.dir), socketDir: socketDir.dir, ...(toolUrl ? { toolUrl } : {}), db, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Listens on a socket path or a TCP address; resolves with the TCP port (0 for a path). */
function listen(server: Server, where: string | { host: string; port: number }): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    const done = () => {
      server.off("error", reject);
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : 0);
    };
    if (typeof where === "string") server.listen(where, done);
    else server.listen(where.port, where.host, done);
  });
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
