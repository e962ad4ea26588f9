import type { Pool } from "@3ngram/db";

/**
 * Columns that change without anything a caller asked for: the resolver stamps when a key or
 * OAuth client was last used, and the outbox relay when it handed an earlier write's job on.
 */
const BOOKKEEPING_COLUMNS = ["last_used_at", "relayed_at"];

/**
 * A digest of every row of every table in the database, so a test can tell whether a request
 * wrote anything (a refused request must not). Needs the owner pool: row-level security would
 * hide other tenants' rows from the runtime role.
 */
export async function createRowFingerprint(owner: Pool): Promise<() => Promise<string>> {
  const { rows } = await owner.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const dropped = BOOKKEEPING_COLUMNS.map((c) => ` - '${c}'`).join("");
  const perTable = rows.map(
    ({ table_name }) =>
      `SELECT '${table_name}' AS t, count(*) AS n, coalesce(md5(string_agg(md5((to_jsonb(r)${dropped})::text), ',' ORDER BY md5((to_jsonb(r)${dropped})::text))), '') AS h FROM public."${table_name}" r`,
  );
  const sql = `SELECT md5(string_agg(t || ':' || n || ':' || h, ';' ORDER BY t)) AS digest FROM (${perTable.join(" UNION ALL ")}) tables`;
  return async () => (await owner.query<{ digest: string }>(sql)).rows[0]!.digest;
}
