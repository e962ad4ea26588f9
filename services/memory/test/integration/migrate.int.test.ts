/**
 * The migrator against a real PostgreSQL database: it records a checksum per applied migration and
 * refuses to start when a migration that already ran has been edited since (an edit would leave
 * databases that ran the old text and those that run the new one silently different).
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createPool, type Pool } from "@3ngram/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../src/db/migrate.js";
import { createTestDatabase, type TestDatabase } from "../../../../test/support/database.js";

const SHIPPED = fileURLToPath(new URL("../../migrations/", import.meta.url));

let database: TestDatabase;
let pool: Pool;
let directory: string;

async function recorded(): Promise<Map<string, string | null>> {
  const { rows } = await pool.query<{ version: string; checksum: string | null }>("SELECT version, checksum FROM schema_migrations ORDER BY version");
  return new Map(rows.map((r) => [r.version, r.checksum]));
}

beforeAll(async () => {
  database = await createTestDatabase("migrate");
  pool = createPool({ connectionString: database.url, max: 2, applicationName: "3ngram-migrate-test" });
  directory = mkdtempSync(join(tmpdir(), "3ngram-migrations-"));
  cpSync(SHIPPED, directory, { recursive: true });
});

afterAll(async () => {
  await pool?.end();
  await database?.drop();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

describe("migration checksums", () => {
  it("applies every migration once and records a checksum for each", async () => {
    const first = await migrate(pool, { directory });
    expect(first.applied.length).toBeGreaterThan(5);
    expect(first.alreadyApplied).toBe(0);
    const checksums = await recorded();
    expect([...checksums.keys()]).toEqual(first.applied);
    for (const checksum of checksums.values()) expect(checksum).toMatch(/^[0-9a-f]{64}$/);

    const again = await migrate(pool, { directory });
    expect(again).toEqual({ applied: [], alreadyApplied: first.applied.length });
  });

  it("refuses to start when an applied migration was edited, naming the file, and changes nothing", async () => {
    const before = await recorded();
    const file = join(directory, readFirst("0002_"));
    const original = readFileSync(file, "utf8");
    writeFileSync(file, `${original}\n-- an afterthought\n`);
    try {
      await expect(migrate(pool, { directory })).rejects.toThrow(/migration 0002_\w+\.sql was changed after this database applied it/);
      expect(await recorded()).toEqual(before);
    } finally {
      writeFileSync(file, original);
    }
    await expect(migrate(pool, { directory })).resolves.toMatchObject({ applied: [] });
  });

  it("hashes a CRLF checkout the same as the LF one", async () => {
    const file = join(directory, readFirst("0001_"));
    const original = readFileSync(file, "utf8");
    writeFileSync(file, original.replace(/\n/g, "\r\n"));
    try {
      await expect(migrate(pool, { directory })).resolves.toMatchObject({ applied: [] });
    } finally {
      writeFileSync(file, original);
    }
  });

  it("records the checksum of a migration applied before checksums were kept", async () => {
    const before = await recorded();
    await pool.query("UPDATE schema_migrations SET checksum = NULL WHERE version = (SELECT min(version) FROM schema_migrations)");
    await migrate(pool, { directory });
    expect(await recorded()).toEqual(before);
  });
});

function readFirst(prefix: string): string {
  const found = readdirNames().find((name) => name.startsWith(prefix));
  if (!found) throw new Error(`no migration ${prefix}*`);
  return found;
}

function readdirNames(): string[] {
  return readdirSync(directory).sort();
}
