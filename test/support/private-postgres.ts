/**
 * A PostgreSQL cluster of a test's own, for tests that restart or stop the database: initdb into a
 * temporary directory with the machine's PostgreSQL binaries (the newest major version that has
 * pgvector beside it, as scripts/ensure-postgres.sh leaves it), started on a free port. The shared
 * server on 5432 is never touched.
 */
import { execFile, execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { freePort } from "./processes.js";

const run = promisify(execFile);

/** Debian's layout: /usr/lib/postgresql/<major>/bin, pgvector in /usr/share/postgresql/<major>. */
function debianPostgresBin(): string {
  const majors = (existsSync("/usr/lib/postgresql") ? readdirSync("/usr/lib/postgresql") : [])
    .filter((major) => existsSync(`/usr/share/postgresql/${major}/extension/vector.control`))
    .sort((a, b) => Number(b) - Number(a));
  if (majors.length === 0)
    throw new Error("no PostgreSQL with pgvector under /usr/lib/postgresql: run scripts/ensure-postgres.sh (make test does), or set TEST_POSTGRES_BIN");
  return `/usr/lib/postgresql/${majors[0]}/bin`;
}

export interface PrivatePostgres {
  port: number;
  /** A connection URL for one database of this cluster (as the superuser `postgres`). */
  url(database: string): string;
  createDatabase(name: string): Promise<void>;
  /** `pg_ctl restart -m <mode>`: `immediate` is a crash (recovery on start), `fast` ends sessions cleanly. */
  restart(mode: "immediate" | "fast"): Promise<void>;
  stop(mode: "immediate" | "fast"): Promise<void>;
  start(): Promise<void>;
  /** Stops the cluster and removes its directory. */
  destroy(): Promise<void>;
}

/**
 * initdb refuses to run as root, so as root every server command runs as the `postgres` account
 * (which then owns the directory); otherwise as the current user.
 */
function asServerUser(): { wrap: (cmd: string, args: string[]) => [string, string[]]; chown: (dir: string) => void } {
  if (process.getuid?.() !== 0) return { wrap: (cmd, args) => [cmd, args], chown: () => {} };
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
  return {
    wrap: (cmd, args) => ["runuser", ["-u", "postgres", "--", cmd, ...args]],
    chown: (dir) => chownSync(dir, id("-u"), id("-g")),
  };
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), "3ngram-pg-"));
  const data = join(dir, "data");
  const port = await freePort();
  const bin = process.env.TEST_POSTGRES_BIN ?? debianPostgresBin();
  const user = asServerUser();
  user.chown(dir);
  const server = async (cmd: string, args: string[]) => {
    const [file, argv] = user.wrap(join(bin, cmd), args);
    await run(file, argv, { cwd: dir });
  };
  await server("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"]);
  // No fsync: a test cluster gives up durability against a machine crash (not a server crash:
  // committed WAL is still written before COMMIT returns) for speed. synchronous_commit stays on,
  // or an immediate restart would lose commits that were already acknowledged.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=100`;
  const ctl = (...args: string[]) => server("pg_ctl", ["-D", data, "-l", join(dir, "server.log"), "-w", "-t", "60", ...args]);
  await ctl("-o", options, "start");

  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    port,
    url,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: url("postgres") });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name}"`);
      } finally {
        await client.end();
      }
    },
    restart: (mode) => ctl("-m", mode, "-o", options, "restart"),
    stop: (mode) => ctl("-m", mode, "stop"),
    start: () => ctl("-o", options, "start"),
    async destroy() {
      await ctl("-m", "immediate", "stop").catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
