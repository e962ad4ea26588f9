import { readdirSync, readFileSync } from "node:fs";
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

/**
 * Applies pending migrations in file-name order, each in its own transaction, under an advisory
 * lock so a Kubernetes migration Job and a starting memory pod never race each other.
 */
export async function migrate(pool: Pool): Promise<MigrationResult> {
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
  return withClient(pool, async (client) => {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
    try {
      await client.query(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
      );
      const { rows } = await client.query<{ version: string }>("SELECT version FROM schema_migrations");
      const done = new Set(rows.map((r) => r.version));
      const applied: string[] = [];
      for (const file of files) {
        const version = file.replace(/\.sql$/, "");
        if (done.has(version)) continue;
        const sql = readFileSync(`${MIGRATIONS_DIR}${file}`, "utf8");
        await client.query("BEGIN");
        try {
          await client.query(sql);
          await client.query("INSERT INTO schema_migrations (version) VALUES ($1)", [version]);
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
