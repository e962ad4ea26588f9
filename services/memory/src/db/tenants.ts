import type { Queryable } from "@3ngram/db";

/** Operator-side writes (run as the owner role, outside any tenant context). */
export async function insertTenant(db: Queryable, tenant: { id: string; name: string }): Promise<void> {
  await db.query("INSERT INTO tenants (id, name) VALUES ($1, $2)", [tenant.id, tenant.name]);
}

export async function insertUser(db: Queryable, user: { id: string; tenantId: string; displayName: string }): Promise<void> {
  await db.query("INSERT INTO users (id, tenant_id, display_name) VALUES ($1, $2, $3)", [user.id, user.tenantId, user.displayName]);
}

export async function insertApiKey(
  db: Queryable,
  key: { id: string; tenantId: string; userId: string; name: string; prefix: string; keyHash: string; scopes: string[] },
): Promise<void> {
  await db.query("INSERT INTO api_keys (id, tenant_id, user_id, name, prefix, key_hash, scopes) VALUES ($1, $2, $3, $4, $5, $6, $7)", [
    key.id,
    key.tenantId,
    key.userId,
    key.name,
    key.prefix,
    key.keyHash,
    key.scopes,
  ]);
}

export interface ResolvedKeyRow {
  keyId: string;
  tenantId: string;
  userId: string;
  scopes: string[];
}

/** The pre-tenant lookup, through the narrow SECURITY DEFINER function. */
export async function resolveKeyHash(db: Queryable, keyHash: string): Promise<ResolvedKeyRow | null> {
  const { rows } = await db.query<ResolvedKeyRow>(`SELECT key_id AS "keyId", tenant_id AS "tenantId", user_id AS "userId", scopes FROM resolve_api_key($1)`, [
    keyHash,
  ]);
  return rows[0] ?? null;
}

export interface ApiKeyListing {
  id: string;
  userId: string;
  name: string;
  prefix: string;
  scopes: string[];
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

const API_KEY_COLUMNS = `id, user_id AS "userId", name, prefix, scopes, created_at AS "createdAt", revoked_at AS "revokedAt", last_used_at AS "lastUsedAt"`;

/**
 * A tenant's keys, newest first: what an owner needs to tell them apart, never the hash. With a
 * user, only that user's keys; with a limit, only the newest that many.
 */
export async function selectApiKeys(db: Queryable, tenantId: string, filter: { userId?: string; limit?: number } = {}): Promise<ApiKeyListing[]> {
  const { rows } = await db.query<ApiKeyListing>(
    `SELECT ${API_KEY_COLUMNS}
     FROM api_keys WHERE tenant_id = $1 AND ($2::uuid IS NULL OR user_id = $2)
     ORDER BY created_at DESC, id DESC LIMIT $3`,
    [tenantId, filter.userId ?? null, filter.limit ?? null],
  );
  return rows;
}

/** One of a user's keys by id, locked for a status change; null when that user has no such key. */
export async function selectUserApiKeyForUpdate(db: Queryable, tenantId: string, userId: string, keyId: string): Promise<ApiKeyListing | null> {
  const { rows } = await db.query<ApiKeyListing>(`SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE tenant_id = $1 AND user_id = $2 AND id = $3 FOR UPDATE`, [
    tenantId,
    userId,
    keyId,
  ]);
  return rows[0] ?? null;
}

/** How many unrevoked keys a user holds (the self-service cap). */
export async function countLiveApiKeys(db: Queryable, tenantId: string, userId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM api_keys WHERE tenant_id = $1 AND user_id = $2 AND revoked_at IS NULL", [
    tenantId,
    userId,
  ]);
  return rows[0]?.n ?? 0;
}

/** Revokes the tenant's live key named by id or prefix; answers the revoked key's id, or null when none matched. */
export async function revokeApiKeyRow(db: Queryable, tenantId: string, ref: { id?: string; prefix?: string }): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>(
    `UPDATE api_keys SET revoked_at = now()
     WHERE tenant_id = $1 AND revoked_at IS NULL AND (id::text = $2 OR prefix = $3)
     RETURNING id`,
    [tenantId, ref.id ?? "", ref.prefix ?? ""],
  );
  return rows[0]?.id ?? null;
}

/** Whether the user is one of the tenant's (row-level security hides every other tenant's users anyway). */
export async function userExists(db: Queryable, tenantId: string, userId: string): Promise<boolean> {
  const { rows } = await db.query("SELECT 1 FROM users WHERE tenant_id = $1 AND id = $2", [tenantId, userId]);
  return rows.length > 0;
}

/** The tenant's users, oldest first (the first is the one create-tenant made). */
export async function selectUserIds(db: Queryable, tenantId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>("SELECT id FROM users WHERE tenant_id = $1 ORDER BY created_at, id", [tenantId]);
  return rows.map((r) => r.id);
}

/**
 * Marks a key as used, at most once a minute per key: key lookups are frequent (each gateway
 * caches one for 30 s) and last-used only needs to tell a live key from a forgotten one.
 */
export async function touchApiKey(db: Queryable, keyId: string): Promise<void> {
  await db.query("UPDATE api_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')", [keyId]);
}
