import { uuidv7 } from "uuidv7";
import { AppError } from "@3ngram/errors";
import { withOwnerTransaction, withRole, withTenant, type Pool } from "@3ngram/db";
import { DEFAULT_SCOPES, PUBLIC_SCOPES } from "@3ngram/rpc";
import type { Logger } from "@3ngram/runtime";
import { insertStarterScopes, STARTER_SCOPES } from "../db/scopes.js";
import { insertApiKey, insertTenant, insertUser, resolveKeyHash, touchApiKey, userExists, type ResolvedKeyRow } from "../db/tenants.js";
import { generateApiKey, looksLikeApiKey, sha256Hex } from "./api-keys.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The scopes a key may hold: the public ones. */
export const API_KEY_SCOPES = PUBLIC_SCOPES;
/** What a key holds unless others are asked for: memory:erase only ever by name. */
export const DEFAULT_API_KEY_SCOPES = DEFAULT_SCOPES;

export interface CreatedTenant {
  tenantId: string;
  userId: string;
  keyId: string;
  /** Shown once; only its hash is stored. */
  apiKey: string;
}

/** Operator command: a tenant (with the starter scopes), its first user and an API key for that user. */
export async function createTenantWithKey(
  pool: Pool,
  input: { tenantName: string; userName?: string; keyName?: string; scopes?: readonly string[] },
): Promise<CreatedTenant> {
  const tenantId = uuidv7();
  const userId = uuidv7();
  const keyId = uuidv7();
  const generated = generateApiKey();
  await withOwnerTransaction(pool, async (db) => {
    await insertTenant(db, { id: tenantId, name: input.tenantName });
    await insertUser(db, { id: userId, tenantId, displayName: input.userName ?? "owner" });
    // Every tenant starts with the usual scopes registered.
    await insertStarterScopes(
      db,
      tenantId,
      STARTER_SCOPES.map(() => uuidv7()),
    );
    await insertApiKey(db, {
      id: keyId,
      tenantId,
      userId,
      name: input.keyName ?? "default",
      prefix: generated.prefix,
      keyHash: generated.hash,
      scopes: [...(input.scopes ?? DEFAULT_API_KEY_SCOPES)],
    });
  });
  return { tenantId, userId, keyId, apiKey: generated.key };
}

/**
 * Resolves a presented API key. Malformed, unknown and revoked keys all answer the same. A
 * resolved key's last-used time is recorded (in the tenant's context, at most once a minute); a
 * failure to record it never fails the lookup.
 */
export async function resolveApiKey(pool: Pool, runtimeRole: string, apiKey: string, log?: Logger): Promise<ResolvedKeyRow> {
  const invalid = new AppError("unauthenticated", "invalid API key");
  if (!looksLikeApiKey(apiKey)) throw invalid;
  const row = await withRole(pool, runtimeRole, (db) => resolveKeyHash(db, sha256Hex(apiKey)));
  if (!row) throw invalid;
  await withTenant(pool, { role: runtimeRole, tenantId: row.tenantId }, (db) => touchApiKey(db, row.keyId)).catch((err: unknown) =>
    log?.warn({ key_id: row.keyId, error: { type: (err as Error)?.name } }, "api key last-used not recorded"),
  );
  return row;
}

/**
 * Whether the user belongs to the tenant: read in that tenant's context, so the answer about a
 * user of any other tenant is "no", exactly as for a user who never existed.
 */
export async function isTenantMember(pool: Pool, runtimeRole: string, tenantId: string, userId: string): Promise<boolean> {
  // A credential's tenant is any string its signer chose; one that is no tenant id names no tenant.
  if (!UUID.test(tenantId)) return false;
  return withTenant(pool, { role: runtimeRole, tenantId, readOnly: true }, (db) => userExists(db, tenantId, userId));
}
