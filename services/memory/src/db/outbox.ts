import type { Queryable } from "@3ngram/db";
import type { TraceCarrier } from "@3ngram/queue";

/** One background job as a write records it, in the write's own transaction. */
export interface OutboxJob {
  tenantId: string;
  queue: string;
  jobName: string;
  /** Ids only: the job reads what it needs through the memory service. */
  payload: Record<string, string>;
  /** The queue's deduplication id. */
  jobId: string;
  /** The recording write's trace context, when tracing is on. */
  traceContext?: TraceCarrier;
}

export interface PendingOutboxJob extends Omit<OutboxJob, "traceContext"> {
  /** bigserial, read as text (it may pass 2^53 in a very long-lived deployment). */
  id: string;
  traceContext: TraceCarrier | null;
}

export async function insertOutboxJobs(db: Queryable, jobs: readonly OutboxJob[]): Promise<void> {
  if (jobs.length === 0) return;
  await db.query(
    `INSERT INTO job_outbox (tenant_id, queue, job_name, payload, job_id, trace_context)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[], $5::text[], $6::jsonb[])`,
    [
      jobs.map((j) => j.tenantId),
      jobs.map((j) => j.queue),
      jobs.map((j) => j.jobName),
      jobs.map((j) => JSON.stringify(j.payload)),
      jobs.map((j) => j.jobId),
      jobs.map((j) => (j.traceContext === undefined ? null : JSON.stringify(j.traceContext))),
    ],
  );
}

/**
 * The oldest pending jobs, locked for this transaction; rows another relay holds are skipped, so
 * several memory replicas relay side by side without sending a row twice at the same time.
 * Needs HOUSEKEEPING_SETTINGS (./housekeeping.ts).
 */
export async function claimPendingOutboxJobs(db: Queryable, limit: number): Promise<PendingOutboxJob[]> {
  const { rows } = await db.query<PendingOutboxJob>(
    `SELECT id::text AS id, tenant_id AS "tenantId", queue, job_name AS "jobName", payload, job_id AS "jobId",
            trace_context AS "traceContext"
       FROM job_outbox WHERE relayed_at IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [limit],
  );
  return rows;
}

export async function markOutboxJobsRelayed(db: Queryable, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query("UPDATE job_outbox SET relayed_at = now() WHERE id = ANY($1::bigint[])", [ids]);
}

/** How far the relay is behind: pending jobs and the age of the oldest. Needs HOUSEKEEPING_SETTINGS. */
export async function selectOutboxBacklog(db: Queryable): Promise<{ pending: number; oldestSeconds: number }> {
  const { rows } = await db.query<{ pending: number; oldestSeconds: number | null }>(
    `SELECT count(*)::int AS pending, extract(epoch FROM now() - min(created_at))::float8 AS "oldestSeconds"
       FROM job_outbox WHERE relayed_at IS NULL`,
  );
  return { pending: rows[0]?.pending ?? 0, oldestSeconds: rows[0]?.oldestSeconds ?? 0 };
}

/** Removes jobs relayed longer ago than `olderThanMs`. Needs HOUSEKEEPING_SETTINGS. */
export async function pruneRelayedOutboxJobs(db: Queryable, olderThanMs: number): Promise<number> {
  const { rowCount } = await db.query("DELETE FROM job_outbox WHERE relayed_at < now() - make_interval(secs => $1)", [olderThanMs / 1000]);
  return rowCount ?? 0;
}
