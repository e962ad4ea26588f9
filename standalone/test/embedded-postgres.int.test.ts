/**
 * The embedded database's settings: its buffer cache is sized for standalone (not PGlite's
 * default), can be set, refuses what is not a size, and an acknowledged commit survives the
 * process being killed (what running without fsync still guarantees).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_SHARED_BUFFERS, startEmbeddedPostgres } from "../src/db/embedded-postgres.js";

const dirs: string[] = [];
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "3ngram-embedded-"));
  dirs.push(dir);
  return dir;
};

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const setting = async (postgres: Awaited<ReturnType<typeof startEmbeddedPostgres>>, name: string) =>
  (await postgres.db.query<{ value: string }>("SELECT current_setting($1) AS value", [name])).rows[0]!.value;

describe("embedded database settings", () => {
  it("starts with standalone's shared_buffers, or the one given", async () => {
    const dir = freshDir();
    const byDefault = await startEmbeddedPostgres(dir);
    try {
      expect(DEFAULT_SHARED_BUFFERS).toBe("16MB");
      expect(await setting(byDefault, "shared_buffers")).toBe("16MB");
    } finally {
      await byDefault.close();
    }
    const given = await startEmbeddedPostgres(dir, { sharedBuffers: "48MB" });
    try {
      expect(await setting(given, "shared_buffers")).toBe("48MB");
      // PGlite's own start parameters are kept beside ours.
      expect(await setting(given, "max_parallel_workers_per_gather")).toBe("0");
    } finally {
      await given.close();
    }
  });

  it("refuses a shared_buffers that is not a whole kB, MB or GB, naming what it got", async () => {
    for (const bad of ["64", "64 MB", "lots", "64MB; DROP TABLE x", "0MB"]) {
      await expect(startEmbeddedPostgres(freshDir(), { sharedBuffers: bad })).rejects.toThrow(`shared buffers must be a size such as 64MB`);
    }
  });

  it("keeps an acknowledged commit when the process holding the database is killed", async () => {
    const dir = freshDir();
    // A separate process commits through a pg pool (as the services do), reports it, and is then
    // killed with SIGKILL: no shutdown, no checkpoint.
    const child = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `
        import { createPool } from "@3ngram/db";
        import { startEmbeddedPostgres } from "@3ngram/standalone";
        const postgres = await startEmbeddedPostgres(${JSON.stringify(dir)});
        const pool = createPool({ connectionString: postgres.url, max: 1, applicationName: "crash-test" });
        await pool.query("CREATE TABLE acknowledged (id int PRIMARY KEY)");
        await pool.query("INSERT INTO acknowledged SELECT generate_series(1, 100)");
        process.stdout.write("committed\\n");
        setInterval(() => {}, 1000);
        `,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_code, signal) => resolve(signal)));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => chunk.toString().includes("committed") && resolve());
      child.once("exit", (code) => reject(new Error(`the writer exited (${code}) before committing`)));
    });
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");

    const reopened = await startEmbeddedPostgres(dir);
    try {
      const { rows } = await reopened.db.query<{ n: number }>("SELECT count(*)::int AS n FROM acknowledged");
      expect(rows[0]!.n).toBe(100);
    } finally {
      await reopened.close();
    }
  }, 60_000);
});
