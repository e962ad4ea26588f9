import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { withClient, type Pool } from "@3ngram/db";

/** Migrations live beside src/ and dist/ so both the compiled service and tests find them. */
const MIGRATIONS_DIR = fileURLToPath(new URL("../../migrations/", import.meta.url));
/** Any constant works; it only has to be the same for every migrator of this schema. */
const MIGRATION_LOCK_KEY = 30_141_592;

export interface MigrationResult {
  applied: string[];
  alreadyApplied: number;
}

export interface MigrateOptions {
  /** Where the NNNN_name.sql files are; the service's own migrations unless a test says otherwise. */
  directory?: string;
}

/**
 * A landed migration is history: a database that ran it never runs it again, so editing the file
 * would make databases disagree silently. Each applied file's checksum is recorded and compared at
 * every start; a mismatch stops the start-up and names the file. Line endings are normalised so a
 * checkout with CRLF files hashes the same.
 */
function checksumOf(sql: string): string {
  return createHash("sha256").update(sql.replace(/\r\n/g, "\n")).digest("hex");
}

/**
 * Applies pending migrations in file-name order, each in its own transaction, under an advisory
 * lock so a Kubernetes migration Job and a starting memory pod never race each other. Refuses to
 * go on when an applied migration's file has changed since (see checksumOf).
 */
export async function migrate(pool: Pool, options: MigrateOptions = {}): Promise<MigrationResult> {
  const directory = options.directory ?? MIGRATIONS_DIR;
  const files = readdirSync(directory)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
  return withClient(pool, async (client) => {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
    try {
      await client.query("CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())");
      // Databases migrated before checksums were kept get theirs recorded on the next start.
      await client.query("ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text");
      const { rows } = await client.query<{ version: string; checksum: string | null }>("SELECT version, checksum FROM schema_migrations");
      const done = new Map(rows.map((r) => [r.version, r.checksum]));
      const applied: string[] = [];
      for (const file of files) {
        const version = file.replace(/\.sql$/, "");
        const sql = readFileSync(join(directory, file), "utf8");
        const checksum = checksumOf(sql);
        if (done.has(version)) {
          const recorded = done.get(version);
          if (recorded === null) {
            await client.query("UPDATE schema_migrations SET checksum = $2 WHERE version = $1", [version, checksum]);
          } else if (recorded !== checksum) {
            throw new Error(`migration ${file} was changed after this database applied it; restore the file and put the change in a new migration`);
          }
          continue;
        }
        await client.query("BEGIN");
        try {
          await client.query(sql);
          await client.query("INSERT INTO schema_migrations (version, checksum) VALUES ($1, $2)", [version, checksum]);
          await client.query("COMMIT");
        } catch (err) {
          await client.query("ROLLBACK");
          throw new Error(`migration ${version} failed: ${(err as Error).message}`, { cause: err });
        }
        applied.push(version);
      }
      return { applied, alreadyApplied: done.size };
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]).catch(() => {});
    }
  });
}
