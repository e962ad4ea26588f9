import type { Queryable } from "@3ngram/db";

export interface IdempotencyKeyRow {
  operation: string;
  requestHash: string;
  memoryId: string;
}

/**
 * Serialises writes that carry the same key in one tenant: a second one waits here until the
 * first one's transaction has ended, then sees its key row.
 */
export async function lockIdempotencyKey(db: Queryable, tenantId: string, key: string): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtextextended($1 || '/idempotency/' || $2, 0))", [tenantId, key]);
}

/** The write a key stands for, unless the key is unknown or older than the retention. */
export async function selectIdempotencyKey(db: Queryable, tenantId: string, key: string, retentionMs: number): Promise<IdempotencyKeyRow | null> {
  const { rows } = await db.query<IdempotencyKeyRow>(
    `SELECT operation, request_hash AS "requestHash", memory_id AS "memoryId" FROM idempotency_keys
      WHERE tenant_id = $1 AND idempotency_key = $2 AND created_at > now() - make_interval(secs => $3)`,
    [tenantId, key, retentionMs / 1000],
  );
  return rows[0] ?? null;
}

/** Records the key with its write; a key past retention that the sweep has not removed yet is taken over. */
export async function insertIdempotencyKey(db: Queryable, row: IdempotencyKeyRow & { tenantId: string; key: string }): Promise<void> {
  await db.query(
    `INSERT INTO idempotency_keys (tenant_id, idempotency_key, operation, request_hash, memory_id) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (tenant_id, idempotency_key) DO UPDATE
       SET operation = EXCLUDED.operation, request_hash = EXCLUDED.request_hash, memory_id = EXCLUDED.memory_id, created_at = now()`,
    [row.tenantId, row.key, row.operation, row.requestHash, row.memoryId],
  );
}

/** Removes keys past retention across tenants. Needs HOUSEKEEPING_SETTINGS (./housekeeping.ts). */
export async function pruneExpiredIdempotencyKeys(db: Queryable, retentionMs: number): Promise<number> {
  const { rowCount } = await db.query("DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(secs => $1)", [retentionMs / 1000]);
  return rowCount ?? 0;
}
