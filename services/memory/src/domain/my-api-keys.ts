/**
 * Self-service API keys: a person lists, issues and revokes their own keys (the web UI's keys
 * page). Everything runs as the runtime role inside the caller's tenant (row-level security) and
 * is narrowed to the caller's user, so another user's key, another tenant's key and an unknown id
 * all read the same: not found. A key never gets more than its creator holds: the scopes asked
 * for must be among the caller's, and a key with scopes the caller lacks cannot be revoked by it
 * (a read-only session must not be able to switch off the read-write key it was not given).
 */
import { uuidv7 } from "uuidv7";
import { AppError } from "@3ngram/errors";
import { withTenant } from "@3ngram/db";
import { MAX_LISTED_API_KEYS, MAX_LIVE_API_KEYS_PER_USER } from "@3ngram/schema";
import { countLiveApiKeys, insertApiKey, revokeApiKeyRow, selectApiKeys, selectUserApiKeyForUpdate, type ApiKeyListing } from "../db/tenants.js";
import { generateApiKey, parseKeyName } from "./api-keys.js";
import type { MemoryDeps } from "./deps.js";
import { API_KEY_SCOPES } from "./tenants.js";

/** Who manages keys: a tenant's user, with the scopes their credential carries. */
export interface KeyOwner {
  tenantId: string;
  userId: string;
  scopes: readonly string[];
}

export interface IssuedKey {
  key: ApiKeyListing;
  /** Shown once; only its hash is stored. */
  apiKey: string;
}

const notFound = () => new AppError("not_found", "no such key");

export function listMyApiKeys(deps: MemoryDeps, owner: KeyOwner): Promise<ApiKeyListing[]> {
  return withTenant(deps.pool, { role: deps.runtimeRole, tenantId: owner.tenantId, readOnly: true }, (db) =>
    selectApiKeys(db, owner.tenantId, { userId: owner.userId, limit: MAX_LISTED_API_KEYS }),
  );
}

export async function createMyApiKey(deps: MemoryDeps, owner: KeyOwner, input: { name: string; scopes: readonly string[] }): Promise<IssuedKey> {
  const name = parseKeyName(input.name);
  const scopes = [...new Set(input.scopes)].sort();
  if (scopes.length === 0 || scopes.some((s) => !(API_KEY_SCOPES as readonly string[]).includes(s))) {
    throw new AppError("invalid_input", `scopes: choose from ${API_KEY_SCOPES.join(", ")}`, { field: "scopes" });
  }
  const beyond = scopes.filter((s) => !owner.scopes.includes(s));
  if (beyond.length > 0) throw new AppError("insufficient_scope", `a new key cannot have ${beyond.join(", ")}: your own credential lacks it`);
  return withTenant(deps.pool, { role: deps.runtimeRole, tenantId: owner.tenantId }, async (db) => {
    if ((await countLiveApiKeys(db, owner.tenantId, owner.userId)) >= MAX_LIVE_API_KEYS_PER_USER) {
      throw new AppError("conflict", `at most ${MAX_LIVE_API_KEYS_PER_USER} live keys per person: revoke one first`);
    }
    const generated = generateApiKey();
    const id = uuidv7();
    await insertApiKey(db, { id, tenantId: owner.tenantId, userId: owner.userId, name, prefix: generated.prefix, keyHash: generated.hash, scopes });
    const [key] = await selectApiKeys(db, owner.tenantId, { userId: owner.userId, limit: 1 });
    if (key === undefined || key.id !== id) throw new AppError("internal_error", "issued key not readable");
    deps.log.info({ tenant_id: owner.tenantId, key_id: id, scopes }, "api key issued by its owner");
    return { key, apiKey: generated.key };
  });
}

/** Revokes one of the caller's keys; revoking a revoked key is a no-op that answers it unchanged. */
export async function revokeMyApiKey(deps: MemoryDeps, owner: KeyOwner, keyId: string): Promise<ApiKeyListing> {
  return withTenant(deps.pool, { role: deps.runtimeRole, tenantId: owner.tenantId }, async (db) => {
    const key = await selectUserApiKeyForUpdate(db, owner.tenantId, owner.userId, keyId);
    if (key === null) throw notFound();
    const beyond = key.scopes.filter((s) => !owner.scopes.includes(s));
    if (beyond.length > 0) throw new AppError("insufficient_scope", `this key has ${beyond.join(", ")}, which your own credential lacks`);
    if (key.revokedAt !== null) return key;
    await revokeApiKeyRow(db, owner.tenantId, { id: keyId });
    const revoked = await selectUserApiKeyForUpdate(db, owner.tenantId, owner.userId, keyId);
    if (revoked === null) throw notFound();
    deps.log.info({ tenant_id: owner.tenantId, key_id: keyId }, "api key revoked by its owner");
    return revoked;
  });
}
