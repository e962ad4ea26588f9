/**
 * What the consolidator's scheduled jobs need from the memory service: the tenant directory, the
 * memories still waiting for an embedding (or embedded by an old model), and the commitment expiry
 * sweep. The memory service stays the only writer: expiry goes through resolve, so the state
 * machine, the liveness rules and the audit events are exactly those of a user's resolve.
 */
import { isAppError } from "@3ngram/errors";
import { withRole, withTenant } from "@3ngram/db";
import { selectOverdueCommitmentMemoryIds, selectPendingEmbeddingIds, selectTenantIds } from "../db/maintenance.js";
import type { Actor, MemoryDeps } from "./deps.js";
import { resolve } from "./resolve.js";

/** A page of tenant ids in id order (pre-tenant: no tenant is bound, only ids are read). */
export async function listTenants(deps: MemoryDeps, input: { after?: string | undefined; limit: number }): Promise<string[]> {
  return withRole(deps.pool, deps.runtimeRole, (db) => selectTenantIds(db, input.after ?? null, input.limit));
}

/** A page of the tenant's memories that need an embedding from `model`. */
export async function listPendingEmbeddings(
  deps: MemoryDeps,
  actor: Actor,
  input: { model: string; after?: string | undefined; limit: number },
): Promise<string[]> {
  return withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId, readOnly: true }, (db) =>
    selectPendingEmbeddingIds(db, actor.tenantId, input.model, input.after ?? null, input.limit),
  );
}

/**
 * Moves live commitments due before `dueBefore` (never later than now) to expired, one resolve per
 * memory. A candidate that changed meanwhile — resolved, revised, archived — is skipped, so running
 * the sweep twice expires nothing twice.
 */
export async function expireCommitments(
  deps: MemoryDeps,
  actor: Actor,
  input: { dueBefore: Date; limit: number },
): Promise<{ expired: string[]; skipped: number }> {
  const now = new Date();
  const dueBefore = input.dueBefore > now ? now : input.dueBefore;
  const candidates = await withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId, readOnly: true }, (db) =>
    selectOverdueCommitmentMemoryIds(db, actor.tenantId, dueBefore, input.limit),
  );
  const expired: string[] = [];
  let skipped = 0;
  for (const memoryId of candidates) {
    try {
      const result = await resolve(deps, actor, { memoryId, status: "expired" });
      if (result.previousStatus === "expired") skipped += 1;
      else expired.push(memoryId);
    } catch (err) {
      if (isAppError(err) && (err.reason === "conflict" || err.reason === "invalid_transition" || err.reason === "not_found")) {
        skipped += 1;
        continue;
      }
      throw err;
    }
  }
  deps.log.info({ candidates: candidates.length, expired: expired.length, skipped }, "commitment sweep done");
  return { expired, skipped };
}
