/**
 * Whether the user a token names belongs to the tenant it names. The gateway verifies OAuth access
 * tokens and review UI sessions itself, and a good signature only proves that a key we trust
 * signed the claims: not that the user is in that tenant, nor that they still are. So every path
 * that turns a token's claims into a Principal asks the memory service (CheckTenantMembership, in
 * the claimed tenant) before trusting them.
 *
 * Answers, yes and no alike, are cached briefly per gateway, bounded in count: a user removed from
 * a tenant stops being let in within the TTL. Concurrent checks of the same pair share one call.
 * While memory cannot answer and nothing fresh is cached, the check fails as unavailable (a
 * retryable 503): an unchecked token is never let through.
 */
import { AppError, isAppError } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import type { Logger } from "@3ngram/runtime";
import { LRUCache } from "lru-cache";
import type { MemoryPeer } from "../clients/memory.js";

const MEMBERSHIP_CACHE_TTL_MS = 60_000;
const MEMBERSHIP_CACHE_MAX_ENTRIES = 10_000;
/** Tenant and user ids are UUIDs; a claim of any other shape names nobody and costs no call. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Resolves true when the user belongs to the tenant, false when not (or when either id is not an
 * id at all); rejects with AppError unavailable when memory cannot say.
 */
export type MembershipCheck = (tenantId: string, userId: string) => Promise<boolean>;

export interface MembershipCheckOptions {
  ttlMs?: number;
  maxEntries?: number;
  now?: () => number;
  log?: Logger;
}

export function createMembershipCheck(memory: MemoryPeer, options: MembershipCheckOptions = {}): MembershipCheck {
  const ttlMs = options.ttlMs ?? MEMBERSHIP_CACHE_TTL_MS;
  const now = options.now ?? Date.now;
  // Freshness is judged here from checkedAt, so that tests (and the TTL) follow the injected clock.
  const cache = new LRUCache<string, { member: boolean; checkedAt: number }>({ max: options.maxEntries ?? MEMBERSHIP_CACHE_MAX_ENTRIES });
  const inFlight = new Map<string, Promise<boolean>>();

  const ask = async (key: string, tenantId: string, userId: string): Promise<boolean> => {
    let member: boolean;
    try {
      // The credential names the claimed tenant: memory answers about that tenant and no other.
      ({ member } = await memory.apiKeys.checkTenantMembership({ userId }, { identity: { tenantId, scopes: [SCOPES.internalAuth] } }));
    } catch (err) {
      const reason = isAppError(err) ? err.reason : "internal_error";
      options.log?.warn({ reason, message: isAppError(err) ? err.message : undefined }, "token membership not checked");
      // Unavailable stays retryable (503); anything else is our fault, never the token's (500, not 401).
      if (reason === "unavailable" || reason === "rate_limited") throw err;
      throw new AppError("internal_error", "token membership not checked");
    }
    cache.set(key, { member, checkedAt: now() });
    return member;
  };

  return async (tenantId, userId) => {
    if (!UUID.test(tenantId) || !UUID.test(userId)) return false;
    const key = `${tenantId.toLowerCase()}/${userId.toLowerCase()}`;
    const cached = cache.get(key);
    if (cached !== undefined && now() < cached.checkedAt + ttlMs) return cached.member;
    const pending = inFlight.get(key);
    if (pending !== undefined) return pending;
    const call = ask(key, tenantId, userId).finally(() => inFlight.delete(key));
    inFlight.set(key, call);
    return call;
  };
}
