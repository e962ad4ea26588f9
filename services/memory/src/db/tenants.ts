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
  await db.query(
    "INSERT INTO api_keys (id, tenant_id, user_id, name, prefix, key_hash, scopes) VALUES ($1, $2, $3, $4, $5, $6, $7)",
    [key.id, key.tenantId, key.userId, key.name, key.prefix, key.keyHash, key.scopes],
  );
}

export interface ResolvedKeyRow {
  keyId: string;
  tenantId: string;
  userId: string;
  scopes: string[];
}

/** The pre-tenant lookup, through the narrow SECURITY DEFINER function. */
export async function resolveKeyHash(db: Queryable, keyHash: string): Promise<ResolvedKeyRow | null> {
  const { rows } = await db.query<ResolvedKeyRow>(
    `SELECT key_id AS "keyId", tenant_id AS "tenantId", user_id AS "userId", scopes FROM resolve_api_key($1)`,
    [keyHash],
  );
  return rows[0] ?? null;
}
