/**
 * The queues this service consumes and the one place a job name is turned into code. Retry
 * policies are set by the producer at enqueue time (EMBED_RETRY_POLICY lives in @3ngram/schema,
 * next to the queue and job names, because the memory service enqueues with it).
 */
import { PermanentJobError, type Job, type QueueBackend, type QueueWorker } from "@3ngram/queue";
import { errorSummary } from "@3ngram/runtime";
import { EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB } from "@3ngram/schema";
import { embedMemory, type EmbedMemoryDeps } from "./jobs/embed-memory.js";

export const CONSUMED_QUEUES = [EMBEDDINGS_QUEUE] as const;
export const KNOWN_JOBS = [EMBED_MEMORY_JOB] as const;

export type JobDeps = EmbedMemoryDeps;

/** How a job attempt ended, as counted in metrics: a runner's own outcome, or a failure kind. */
export type JobOutcome = string;
export const FAILED_RETRYABLE = "failed_retryable";
export const FAILED_PERMANENT = "failed_permanent";

/** Runs one job by name and returns its outcome. An unknown name can never succeed, so it is permanent. */
export async function runJob(job: Job, deps: JobDeps): Promise<JobOutcome> {
  switch (job.name) {
    case EMBED_MEMORY_JOB:
      return embedMemory(job.data, deps);
    default:
      throw new PermanentJobError(`unknown job name "${job.name.slice(0, 64)}"`);
  }
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
        } catch (err) {
          if (err instanceof PermanentJobError) {
            onOutcome(jobLabel, FAILED_PERMANENT);
            log.error({ error: errorSummary(err), ms: ms() }, "job failed permanently");
          } else {
            onOutcome(jobLabel, FAILED_RETRYABLE);
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
