/**
 * The queues this service consumes and the one place a job name is turned into code. Retry
 * policies are set by the producer at enqueue time (EMBED_RETRY_POLICY and EXTRACT_RETRY_POLICY
 * live in @3ngram/schema, next to the queue and job names, because the memory service enqueues
 * with them; the scheduled and per-tenant jobs' policies live beside their runners).
 */
import { isAppError } from "@3ngram/errors";
import { PermanentJobError, UnavailableJobError, failureCause, type Job, type JobQueue, type QueueBackend, type QueueWorker } from "@3ngram/queue";
import { errorSummary } from "@3ngram/runtime";
import { CONSOLIDATOR_QUEUES, EMBED_MEMORY_JOB } from "@3ngram/schema";
import type { FactExtractor } from "./extraction/index.js";
import { BACKFILL_TENANT_JOB, backfillTenant } from "./jobs/backfill-tenant.js";
import { CONSOLIDATE_TENANT_JOB, consolidateTenant } from "./jobs/consolidate-tenant.js";
import { embedMemory, type EmbedMemoryDeps } from "./jobs/embed-memory.js";
import { EXTRACT_FACTS_JOB, extractFactsFromMemory } from "./jobs/extract-facts.js";
import type { ConsolidatorMemory, ConsolidatorSearch } from "./peers.js";
import { OAUTH_GC_JOB, collectOAuthGarbage } from "./jobs/oauth-gc.js";
import { REDRIVE_DEAD_LETTERS_JOB, redriveUnavailableDeadLetters } from "./jobs/redrive-dead-letters.js";
import { SWEEP_TENANT_JOB, sweepTenant } from "./jobs/sweep-tenant.js";
import { COMMITMENT_SWEEP_JOB, CONSOLIDATION_SCAN_JOB, EMBEDDING_BACKFILL_JOB, fanOutToTenants } from "./jobs/tenant-scans.js";

export const CONSUMED_QUEUES = CONSOLIDATOR_QUEUES;
const KNOWN_JOBS = [
  EMBED_MEMORY_JOB,
  EXTRACT_FACTS_JOB,
  CONSOLIDATION_SCAN_JOB,
  EMBEDDING_BACKFILL_JOB,
  COMMITMENT_SWEEP_JOB,
  CONSOLIDATE_TENANT_JOB,
  BACKFILL_TENANT_JOB,
  SWEEP_TENANT_JOB,
  OAUTH_GC_JOB,
  REDRIVE_DEAD_LETTERS_JOB,
] as const;

/** Everything the job runners need. */
export interface JobDeps extends EmbedMemoryDeps {
  memory: ConsolidatorMemory;
  search: ConsolidatorSearch;
  extractor: FactExtractor;
  /** Where the scheduled jobs queue their per-tenant jobs. */
  queue: JobQueue;
  /** The dead letters the periodic re-drive puts back. */
  deadLetters: Pick<QueueBackend, "redrive">;
  /** How long after its due time a live commitment expires. */
  commitmentGraceMs: number;
  /** OAuth clients unused for this many days are garbage-collected. */
  oauthClientIdleDays: number;
}

/** How a job attempt ended, as counted in metrics: a runner's own outcome, or a failure kind. */
export type JobOutcome = string;
const FAILED_RETRYABLE = "failed_retryable";
const FAILED_UNAVAILABLE = "failed_unavailable";
const FAILED_PERMANENT = "failed_permanent";

/** Runs one job by name and returns its outcome. An unknown name can never succeed, so it is permanent. */
export async function runJob(job: Job, deps: JobDeps): Promise<JobOutcome> {
  switch (job.name) {
    case EMBED_MEMORY_JOB:
      return embedMemory(job.data, deps);
    case EXTRACT_FACTS_JOB:
      return extractFactsFromMemory(job.data, deps);
    case CONSOLIDATION_SCAN_JOB:
    case EMBEDDING_BACKFILL_JOB:
    case COMMITMENT_SWEEP_JOB:
      return fanOutToTenants(job.name, job.data, deps);
    case CONSOLIDATE_TENANT_JOB:
      return consolidateTenant(job.data, deps);
    case BACKFILL_TENANT_JOB:
      return backfillTenant(job.data, deps);
    case SWEEP_TENANT_JOB:
      return sweepTenant(job.data, deps);
    case OAUTH_GC_JOB:
      return collectOAuthGarbage(job.data, deps);
    case REDRIVE_DEAD_LETTERS_JOB:
      return redriveUnavailableDeadLetters(job.data, deps);
    default:
      throw new PermanentJobError(`unknown job name "${job.name.slice(0, 64)}"`);
  }
}

/**
 * A peer (or its database) being away is `unavailable` on the wire; as a job failure it is an
 * UnavailableJobError, so a job that outlives its attempts that way is re-driven later on its own.
 */
function asJobError(err: unknown): unknown {
  if (isAppError(err) && err.reason === "unavailable") return new UnavailableJobError(err.message, { cause: err });
  return err;
}

export interface WorkerSetup {
  backend: QueueBackend;
  deps: JobDeps;
  concurrency: number;
  /** Called once per attempt; `job` is "unknown" for names this service does not run, to bound label values. */
  onOutcome?: (job: string, outcome: JobOutcome) => void;
}

/** Starts one worker per consumed queue; closing waits for the jobs they are running. */
export function startWorkers(setup: WorkerSetup): QueueWorker {
  const { backend, deps, concurrency, onOutcome = () => {} } = setup;
  const workers = CONSUMED_QUEUES.map((queue) =>
    backend.work(
      queue,
      async (job) => {
        const jobLabel = (KNOWN_JOBS as readonly string[]).includes(job.name) ? job.name : "unknown";
        const log = deps.log.child({ queue, job: jobLabel, job_id: job.id, attempt: job.attempt });
        const started = performance.now();
        const ms = () => Math.round(performance.now() - started);
        try {
          const outcome = await runJob(job, { ...deps, log });
          onOutcome(jobLabel, outcome);
          log.info({ outcome, ms: ms() }, "job done");
        } catch (raw) {
          const err = asJobError(raw);
          const cause = failureCause(err);
          if (cause === "permanent") {
            onOutcome(jobLabel, FAILED_PERMANENT);
            log.error({ error: errorSummary(err), ms: ms() }, "job failed permanently");
          } else {
            onOutcome(jobLabel, cause === "unavailable" ? FAILED_UNAVAILABLE : FAILED_RETRYABLE);
            log.warn({ error: errorSummary(err), ms: ms() }, "job failed; retried while attempts remain");
          }
          throw err;
        }
      },
      { concurrency },
    ),
  );
  return {
    async close(): Promise<void> {
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}
