/**
 * Who can reach standalone's embedded database, and what an outside client can do to it: no
 * network port unless asked for; the Unix socket only for the owner; the operator commands find
 * it from the data directory; a tool port takes the generated password; and a tool hammering that
 * port (or the socket) never stalls the server's own work.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { connectMcp } from "../../test/support/mcp.js";
import { startStandalone, type RunningStandalone } from "../src/standalone.js";

const REPO_ROOT = join(import.meta.dirname, "..", "..");
const dataDir = mkdtempSync(join(tmpdir(), "3ngram-db-access-"));
const started: RunningStandalone[] = [];

async function start(dbPort?: number): Promise<RunningStandalone> {
  const running = await startStandalone({
    dataDir,
    port: 0,
    host: "127.0.0.1",
    dbPort,
    logLevel: "silent",
    env: { EMBEDDINGS_PROVIDER: "hashing", RATE_LIMIT_KEY_PER_MINUTE: "1000000", RATE_LIMIT_USER_PER_MINUTE: "1000000" },
  });
  started.push(running);
  return running;
}

afterAll(async () => {
  for (const running of started) await running.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The TCP ports this process listens on, from /proc: the sockets among its open files. */
function listeningTcpPorts(): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`))?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // The descriptor closed while we looked.
    }
  }
  const ports: number[] = [];
  for (const table of ["/proc/self/net/tcp", "/proc/self/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").trim().split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local address, state (0A = LISTEN), inode
      if (cols[3] === "0A" && inodes.has(cols[9]!)) ports.push(parseInt(cols[1]!.split(":")[1]!, 16));
    }
  }
  return ports;
}

/** Sends a PostgreSQL StartupMessage; true when the port answers as PostgreSQL does (an 'R' authentication message). */
function speaksPostgres(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const params = Buffer.from("user\0postgres\0database\0postgres\0\0");
    const header = Buffer.alloc(8);
    header.writeUInt32BE(8 + params.length, 0);
    header.writeUInt32BE(196_608, 4);
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(2_000, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => socket.write(Buffer.concat([header, params])));
    socket.once("data", (chunk) => done(chunk[0] === 0x52));
  });
}

const run = promisify(execFile);

/** A URL with the password in it (node-postgres takes a connection string's empty password over a `password` option). */
function withPassword(url: string, password: string): string {
  const out = new URL(url);
  out.password = encodeURIComponent(password);
  return out.toString();
}

describe("standalone's database access", () => {
  let running: RunningStandalone;

  it("opens no TCP port for the database, only a 0600 socket in a 0700 directory of the data directory", async () => {
    running = await start();
    const ports = listeningTcpPorts();
    // The gateway and the gRPC services listen; none of them is the database.
    expect(ports).toContain(Number(new URL(running.url).port));
    const postgresPorts: number[] = [];
    for (const port of ports) if (await speaksPostgres(port)) postgresPorts.push(port);
    expect(postgresPorts).toEqual([]);

    const socketDir = join(dataDir, "run");
    expect(running.databaseUrl).toBe(`postgres://postgres@${encodeURIComponent(socketDir)}/postgres`);
    expect(statSync(socketDir).mode & 0o777).toBe(0o700);
    const socket = statSync(join(socketDir, ".s.PGSQL.5432"));
    expect(socket.isSocket()).toBe(true);
    expect(socket.mode & 0o777).toBe(0o600);
    expect(running.dbTools).toBeUndefined();
  }, 90_000);

  it("lets the operator commands reach the running server's database from its data directory alone", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, THREENGRAM_DATA_DIR: basename(dataDir) };
    delete env.DATABASE_URL;
    delete env.INIT_CWD;
    // A relative data directory, from where the command was started (as `make run` takes it).
    const listed = await run(process.execPath, [join(REPO_ROOT, "services/memory/dist/cli.js"), "list-keys", running.identity.tenantId], {
      env,
      cwd: dirname(dataDir),
    });
    expect((JSON.parse(listed.stdout) as Array<{ name: string }>).map((k) => k.name)).toContain("standalone");
  }, 30_000);

  it("opens a tool port on request that refuses a client without the generated password", async () => {
    await running.close();
    running = await start(0);
    const tools = running.dbTools!;
    expect(new URL(tools.url).hostname).toBe("127.0.0.1");
    expect(new URL(tools.url).password).toBe("");
    expect(statSync(tools.passwordFile).mode & 0o777).toBe(0o600);
    const password = readFileSync(tools.passwordFile, "utf8").trim();
    expect(password.length).toBeGreaterThanOrEqual(24);

    const attempt = async (pass: string | undefined) => {
      const client = new pg.Client({ connectionString: pass === undefined ? tools.url : withPassword(tools.url, pass) });
      client.on("error", () => {});
      try {
        await client.connect();
        return (await client.query<{ n: number }>("SELECT count(*)::int AS n FROM tenants")).rows[0]!.n;
      } finally {
        await client.end().catch(() => {});
      }
    };
    await expect(attempt(undefined)).rejects.toThrow();
    await expect(attempt("not-the-password")).rejects.toMatchObject({ code: "28P01" });
    expect(await attempt(password)).toBe(1);

    // The password is kept: a restart with the port takes the same one.
    await running.close();
    running = await start(0);
    expect(readFileSync(running.dbTools!.passwordFile, "utf8").trim()).toBe(password);
  }, 120_000);

  it("keeps serving while outside clients hammer parameterised queries for ten seconds", async () => {
    const password = readFileSync(running.dbTools!.passwordFile, "utf8").trim();
    const mcp = await connectMcp(running.mcpUrl, running.identity.apiKey, { modern: true });
    const until = Date.now() + 10_000;
    const outside = { answered: 0 };
    const hammer = async (connectionString: string) => {
      const client = new pg.Client({ connectionString });
      client.on("error", () => {});
      await client.connect();
      try {
        // Parse, Bind, Execute, Sync on every query: the extended protocol that stalled the server.
        for (let i = 0; Date.now() < until; i++) {
          await client.query("SELECT $1::int + 1 AS n, (SELECT count(*) FROM memories WHERE topic = $2) AS m", [i, `topic ${i % 7}`]);
          outside.answered++;
        }
      } finally {
        await client.end();
      }
    };
    const served = { calls: 0, failures: [] as string[] };
    const work = async (worker: number) => {
      for (let i = 0; Date.now() < until; i++) {
        try {
          await mcp.call("remember", { memoryType: "fact", topic: `topic ${i % 7}`, content: `Worker ${worker} notes fact ${i} about the harbour.` });
          await mcp.call("search", { query: "harbour facts", limit: 5 });
          served.calls += 2;
        } catch (err) {
          served.failures.push((err as Error).message);
        }
      }
    };
    const readiness: number[] = [];
    const probe = async () => {
      while (Date.now() < until) {
        readiness.push((await fetch(`${running.url}/ready`)).status);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    };
    await Promise.all([
      hammer(withPassword(running.dbTools!.url, password)),
      hammer(withPassword(running.dbTools!.url, password)),
      hammer(running.databaseUrl),
      work(1),
      work(2),
      probe(),
    ]);
    expect(served.failures).toEqual([]);
    expect(served.calls).toBeGreaterThan(10);
    expect(outside.answered).toBeGreaterThan(10);
    expect(readiness.length).toBeGreaterThan(10);
    expect(readiness.filter((status) => status !== 200)).toEqual([]);
    // And afterwards: still answering.
    expect((await mcp.call<{ hits: unknown[] }>("search", { query: "harbour facts", limit: 5 })).hits.length).toBeGreaterThan(0);
    await mcp.close();
  }, 120_000);

  it("disconnects a tool that keeps a transaction open, so the server's calls wait at most a moment", async () => {
    const password = readFileSync(running.dbTools!.passwordFile, "utf8").trim();
    const tool = new pg.Client({ connectionString: withPassword(running.dbTools!.url, password) });
    const toolError = new Promise<Error>((resolve) => tool.on("error", resolve));
    await tool.connect();
    await tool.query("BEGIN");
    await tool.query("SELECT count(*) FROM memories");
    // The tool now sits in its transaction; the server's next call needs the session.
    const startedAt = Date.now();
    const res = await fetch(`${running.url}/api/v1/search`, {
      method: "POST",
      headers: { Authorization: `Bearer ${running.identity.apiKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({ query: "harbour facts", limit: 3 }),
    });
    expect(res.status).toBe(200);
    expect(Date.now() - startedAt).toBeLessThan(4_000);
    expect((await toolError).message).toMatch(/idle/);
    await tool.end().catch(() => {});
  }, 30_000);
});
