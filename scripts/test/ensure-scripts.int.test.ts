/**
 * The ensure scripts `make test` runs first (`make services`) only check once everything is up: run
 * again, each prints nothing and leaves the very same servers running. And the Redis script really
 * starts a server where none answers, then leaves that one alone too.
 */
import { execFile } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { TEST_REDIS_URL } from "../../test/support/database.js";
import { freePort, REPO_ROOT } from "../../test/support/processes.js";

const run = promisify(execFile);
const ADMIN_DATABASE_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

function isWritableDirectory(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

async function ensure(script: string, env: Record<string, string> = {}): Promise<string> {
  const { stdout, stderr } = await run("bash", [join(REPO_ROOT, "scripts", script)], { env: { ...process.env, ...env } });
  return stdout + stderr;
}

/** What tells one server process from another: a restart or a second server changes it. */
async function redisIdentity(url: string): Promise<string> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const info = await redis.info("server");
    return ["run_id", "process_id"].map((key) => new RegExp(`^${key}:(\\S+)`, "m").exec(info)?.[1]).join("/");
  } finally {
    redis.disconnect();
  }
}

async function postgresIdentity(): Promise<string> {
  const client = new pg.Client({ connectionString: ADMIN_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ started: string }>("SELECT pg_postmaster_start_time()::text AS started");
    return rows[0]!.started;
  } finally {
    await client.end();
  }
}

async function machineState() {
  const chromium = statSync(CHROMIUM_PATH);
  return {
    postgres: await postgresIdentity(),
    redis: await redisIdentity(TEST_REDIS_URL),
    chromium: `${chromium.ino}/${chromium.mtimeMs}`,
  };
}

describe("ensure scripts", () => {
  it("print nothing and change nothing when everything is already up", { timeout: 60_000 }, async () => {
    const before = await machineState();
    for (const script of ["ensure-postgres.sh", "ensure-redis.sh", "ensure-chromium.sh"]) {
      expect(await ensure(script), script).toBe("");
      expect(await ensure(script), `${script}, again`).toBe("");
    }
    expect(await machineState()).toEqual(before);
  });

  it("leave their lock free: a server they started does not hold it", { timeout: 30_000 }, async () => {
    // ensure-postgres.sh takes this lock only when it has work to do (make services did, on a fresh
    // machine). Were the lock handed down to the postmaster it started, the next run with work to
    // do would wait for as long as PostgreSQL runs. -n: fail at once instead of waiting.
    const lockDir = isWritableDirectory("/run/lock") ? "/run/lock" : (process.env.TMPDIR ?? "/tmp");
    await expect(run("flock", ["-n", join(lockDir, "3ngram-ensure-postgres.lock"), "true"])).resolves.toBeDefined();
  });

  describe("where no Redis answers", () => {
    let url: string | undefined;
    afterAll(async () => {
      if (url) await run("redis-cli", ["-u", url, "shutdown", "nosave"]);
    });

    it("starts one, then only checks it", { timeout: 60_000 }, async () => {
      url = `redis://127.0.0.1:${await freePort()}`;
      expect(await ensure("ensure-redis.sh", { TEST_REDIS_URL: url })).toMatch(/starting one[\s\S]*Redis is ready/);
      const started = await redisIdentity(url);
      expect(await ensure("ensure-redis.sh", { TEST_REDIS_URL: url })).toBe("");
      expect(await redisIdentity(url)).toBe(started);
    });
  });
});
