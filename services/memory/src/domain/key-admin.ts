/**
 * Operator-side API key administration: issue another key for a tenant's user, list a tenant's
 * keys, revoke one. Runs as the owner role (the memory CLI), with the tenant bound in the
 * transaction so row-level security holds even for an owner that is not a superuser. A key is
 * printed once when issued; only its hash is stored, and a listing shows the prefix, never the hash.
 */
import { uuidv7 } from "uuidv7";
import { AppError } from "@3ngram/errors";
import { withOwnerTransaction, type Pool, type PoolClient } from "@3ngram/db";
import { insertApiKey, revokeApiKeyRow, selectApiKeys, selectUserIds, type ApiKeyListing } from "../db/tenants.js";
import { generateApiKey, parseKeyName } from "./api-keys.js";
import { API_KEY_SCOPES } from "./tenants.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PREFIX = /^[A-Za-z0-9_-]{8}$/;

export interface IssuedApiKey {
  keyId: string;
  userId: string;
  prefix: string;
  scopes: string[];
  /** Shown once; only its hash is stored. */
  apiKey: string;
}

function forTenant<T>(pool: Pool, tenantId: string, fn: (db: PoolClient) => Promise<T>): Promise<T> {
  if (!UUID.test(tenantId)) throw new AppError("invalid_input", "tenant: not a tenant id", { field: "tenant" });
  return withOwnerTransaction(pool, fn, { tenantId });
}

/** A new key for one of the tenant's users (the first user when none is named), with the given scopes. */
export async function issueApiKey(pool: Pool, input: { tenantId: string; userId?: string; name: string; scopes: readonly string[] }): Promise<IssuedApiKey> {
  const scopes = [...new Set(input.scopes)];
  if (scopes.length === 0 || scopes.some((s) => !(API_KEY_SCOPES as readonly string[]).includes(s))) {
    throw new AppError("invalid_input", `scopes: choose from ${API_KEY_SCOPES.join(", ")}`, { field: "scopes" });
  }
  const name = parseKeyName(input.name);
  return forTenant(pool, input.tenantId, async (db) => {
    const users = await selectUserIds(db, input.tenantId);
    const userId = input.userId ?? users[0];
    if (userId === undefined || !users.includes(userId)) throw new AppError("not_found", "no such user in this tenant");
    const generated = generateApiKey();
    const keyId = uuidv7();
    await insertApiKey(db, { id: keyId, tenantId: input.tenantId, userId, name, prefix: generated.prefix, keyHash: generated.hash, scopes });
    return { keyId, userId, prefix: generated.prefix, scopes, apiKey: generated.key };
  });
}

/** The tenant's keys, newest first, revoked ones included (with when). */
export function listApiKeys(pool: Pool, tenantId: string): Promise<ApiKeyListing[]> {
  return forTenant(pool, tenantId, (db) => selectApiKeys(db, tenantId));
}

/**
 * Revokes the tenant's live key named by its id or its 8-character prefix. Gateways stop
 * accepting it once their resolution cache entry expires (30 s).
 */
export async function revokeApiKey(pool: Pool, input: { tenantId: string; key: string }): Promise<string> {
  const ref = UUID.test(input.key) ? { id: input.key } : PREFIX.test(input.key) ? { prefix: input.key } : null;
  if (ref === null) throw new AppError("invalid_input", "key: a key id or its 8-character prefix", { field: "key" });
  const revoked = await forTenant(pool, input.tenantId, (db) => revokeApiKeyRow(db, input.tenantId, ref));
  if (revoked === null) throw new AppError("not_found", "no live key with that id or prefix in this tenant");
  return revoked;
}
