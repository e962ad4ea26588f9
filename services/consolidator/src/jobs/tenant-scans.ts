/**
 * The scheduled jobs. Each runs on a fixed interval (aligned to the clock: the consolidation scan
 * at the top of every hour, the backfill every half hour, the sweep every quarter hour), lists the
 * tenants through the memory service and queues one per-tenant job for each. A per-tenant job
 * still waiting from an earlier run absorbs the new one (same job id), so a slow tenant never piles
 * up work. The fan-out is idempotent; so is every per-tenant job.
 */
import type { JobQueue, JobSchedule, RetryPolicy } from "@3ngram/queue";
import { SCOPES } from "@3ngram/rpc";
import type { Logger } from "@3ngram/runtime";
import { MAINTENANCE_QUEUE } from "@3ngram/schema";
import { z } from "zod";
import { BACKFILL_TENANT_JOB } from "./backfill-tenant.js";
import { CONSOLIDATE_TENANT_JOB } from "./consolidate-tenant.js";
import { TENANT_JOB_RETRY_POLICY, callPeer, parsePayload } from "./peer.js";
import type { ConsolidatorMemory } from "../peers.js";
import { SWEEP_TENANT_JOB } from "./sweep-tenant.js";

export const CONSOLIDATION_SCAN_JOB = "consolidation-scan";
export const EMBEDDING_BACKFILL_JOB = "embedding-backfill";
export const COMMITMENT_SWEEP_JOB = "commitment-sweep";

/** A scheduled run may fail while the memory service restarts (10 s doubling to a minute, ~2 min); the next run comes anyway. */
export const SCAN_RETRY_POLICY: RetryPolicy = { attempts: 5, backoffMs: 10_000, maxBackoffMs: 60_000 };

const MINUTE = 60_000;

/** Each scheduled job and the per-tenant job it fans out to. */
export const TENANT_SCANS = {
  [CONSOLIDATION_SCAN_JOB]: { everyMs: 60 * MINUTE, perTenant: CONSOLIDATE_TENANT_JOB },
  [EMBEDDING_BACKFILL_JOB]: { everyMs: 30 * MINUTE, perTenant: BACKFILL_TENANT_JOB },
  [COMMITMENT_SWEEP_JOB]: { everyMs: 15 * MINUTE, perTenant: SWEEP_TENANT_JOB },
} as const;
export type TenantScanJob = keyof typeof TENANT_SCANS;

/** What the consolidator registers at start-up (scheduling the same id again replaces it). */
export const SCHEDULES: readonly JobSchedule[] = Object.entries(TENANT_SCANS).map(([name, scan]) => ({
  id: name,
  name,
  everyMs: scan.everyMs,
  retry: SCAN_RETRY_POLICY,
}));

/**
 * Scans that also run once whenever a consolidator starts, not only on their clock. The backfill
 * does: a server started with another embedding model (or on memories left without a vector)
 * starts re-embedding at once rather than at the next half hour (docs/adr/0038). Every start queues
 * it under one id, so replicas starting together queue it once.
 */
const SCANS_AT_START: readonly TenantScanJob[] = [EMBEDDING_BACKFILL_JOB];

export async function queueScansAtStart(queue: JobQueue): Promise<TenantScanJob[]> {
  for (const scan of SCANS_AT_START) await queue.enqueue(MAINTENANCE_QUEUE, scan, {}, { jobId: `${scan}:at-start`, retry: SCAN_RETRY_POLICY });
  return [...SCANS_AT_START];
}

const TENANT_PAGE = 1000;
const scanPayloadSchema = z.strictObject({});

export interface TenantScanDeps {
  memory: Pick<ConsolidatorMemory, "maintenance">;
  /** Where per-tenant jobs are queued. */
  queue: JobQueue;
  log: Logger;
}

/** Queues the per-tenant job of `scan` for every tenant. Returns how many tenants were visited. */
export async function fanOutToTenants(scan: TenantScanJob, payload: unknown, deps: TenantScanDeps): Promise<"fanned_out"> {
  parsePayload(scan, scanPayloadSchema, payload ?? {});
  const perTenant = TENANT_SCANS[scan].perTenant;
  const identity = { scopes: [SCOPES.internalConsolidate] };
  let after: string | undefined;
  let tenants = 0;
  for (;;) {
    const page = await callPeer("memory", () => deps.memory.maintenance.listTenants({ after, limit: TENANT_PAGE }, { identity }));
    for (const tenantId of page.tenantIds) {
      await deps.queue.enqueue(MAINTENANCE_QUEUE, perTenant, { tenantId }, { jobId: `${perTenant}:${tenantId}`, retry: TENANT_JOB_RETRY_POLICY });
    }
    tenants += page.tenantIds.length;
    if (page.tenantIds.length < TENANT_PAGE) break;
    after = page.tenantIds.at(-1)!;
  }
  deps.log.info({ scan, perTenant, tenants }, "per-tenant jobs queued");
  return "fanned_out";
}
