/**
 * The commitment sweep for one tenant: live commitments (open or waiting, memory live) that fell
 * due more than the grace period ago move to expired, through the memory service's resolve path —
 * so the state machine, liveness and audit events are those of any resolve. Until then an overdue
 * commitment stays open and surfaces in the briefing's overdue section. Idempotent: an expired
 * commitment is no longer a candidate.
 */
import { SCOPES } from "@3ngram/rpc";
import type { Logger } from "@3ngram/runtime";
import { callPeer, parsePayload, tenantJobSchema } from "./peer.js";
import type { ConsolidatorMemory } from "../peers.js";

export const SWEEP_TENANT_JOB = "sweep-tenant";

/** Commitments expired per call; a run makes at most this many calls. */
const BATCH = 500;
const MAX_BATCHES = 10;

export interface SweepTenantDeps {
  memory: Pick<ConsolidatorMemory, "maintenance">;
  /** How long after its due time a commitment expires. */
  commitmentGraceMs: number;
  log: Logger;
}

export type SweepOutcome = "expired" | "nothing_due";

export async function sweepTenant(payload: unknown, deps: SweepTenantDeps, now: Date = new Date()): Promise<SweepOutcome> {
  const { tenantId } = parsePayload(SWEEP_TENANT_JOB, tenantJobSchema, payload);
  const identity = { tenantId, scopes: [SCOPES.internalConsolidate] };
  const dueBeforeMs = now.getTime() - deps.commitmentGraceMs;
  const dueBefore = new Date(dueBeforeMs).toISOString();
  let expired = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const result = await callPeer("memory", () => deps.memory.maintenance.expireCommitments({ dueBefore, limit: BATCH }, { identity }));
    expired += result.memoryIds.length;
    if (result.memoryIds.length + result.skipped < BATCH) break;
  }
  deps.log.info({ expired, graceMs: deps.commitmentGraceMs }, "commitment sweep done");
  return expired > 0 ? "expired" : "nothing_due";
}
