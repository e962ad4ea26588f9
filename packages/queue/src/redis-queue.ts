/**
 * The distributed backend: BullMQ on Redis. Every key lives under `prefix` (BullMQ writes
 * `<prefix>:<queue>:…`), so deployments, and test runs, sharing one Redis never see each
 * other's jobs.
 */
import { Queue, UnrecoverableError, Worker, type Job as BullJob, type JobsOptions } from "bullmq";
import { Redis } from "ioredis";
import { FAILURE_CAUSES, failureCause, type FailureCause } from "./errors.js";
import { parseTraceCarrier, traceEnqueue, traceJob } from "./trace-context.js";
import {
  DEAD_LETTER_SCAN_LIMIT,
  DEFAULT_REDRIVE_LIMIT,
  NO_RETRY,
  backoffDelay,
  checkConcurrency,
  checkEnqueue,
  checkSchedule,
  emptyDeadLetterCounts,
  nextBoundary,
} from "./options.js";
import type {
  DeadLetterCounts,
  EnqueueOptions,
  JobHandler,
  JobQueue,
  JobSchedule,
  QueueBackend,
  QueueCounts,
  QueueWorker,
  RedriveOptions,
  RetryPolicy,
  WorkOptions,
} from "./queue.js";

export interface RedisQueueBackendOptions {
  redisUrl: string;
  /** Namespace for every BullMQ key, e.g. "3ngram" in production, a unique value per test run. */
  prefix: string;
  /** Completed jobs kept per queue for inspection; older ones are evicted as new ones complete. Default 1000. */
  keepCompleted?: number;
  /**
   * An enqueue that gets no answer from Redis within this long rejects, so a producer's request
   * path never hangs on a Redis outage. The job may still be added once Redis answers. Default 5000.
   */
  enqueueTimeoutMs?: number;
  /** Connection and worker errors (BullMQ reports them as events, not rejections). Default: ignored. */
  onError?: (err: Error) => void;
  /**
   * How long a worker's hold on a running job lasts without renewal (renewed while the process
   * lives). When a worker dies mid-job, another worker takes the job over once this lapses, and the
   * stalled-job check runs at the same interval. Default 30000 (BullMQ's default).
   */
  lockDurationMs?: number;
}

const DEFAULT_KEEP_COMPLETED = 1000;
/**
 * How often a job may be taken back from a worker that vanished mid-job (killed, or cut off by a
 * Redis restart) before it is dead-lettered. BullMQ's default of 1 dead-letters a job that met a
 * Redis outage and then a worker restart; three still stops a job that keeps killing its worker.
 */
const MAX_STALLED_COUNT = 3;
const DEFAULT_ENQUEUE_TIMEOUT_MS = 5000;
/** Our backoff as BullMQ stores it on a job: exponential from `delay`, capped at `maxDelay`. */
const CAPPED_EXPONENTIAL = "capped-exponential";
/** Page size when walking the failed set. */
const FAILED_PAGE = 500;

/**
 * BullMQ keeps an error's message as the job's failedReason; ours lead with the cause
 * ("unavailable: …"), which is how a dead letter's cause is read back.
 */
function withCause(err: unknown): Error {
  const cause = failureCause(err);
  const message = `${cause}: ${err instanceof Error ? err.message : String(err)}`;
  // BullMQ skips the remaining attempts only for its own error class.
  return cause === "permanent" ? new UnrecoverableError(message) : new Error(message);
}

function causeOf(job: BullJob): FailureCause {
  const prefix = job.failedReason?.split(":", 1)[0];
  return (FAILURE_CAUSES as readonly string[]).includes(prefix ?? "") ? (prefix as FailureCause) : "error";
}

export function createRedisQueueBackend(options: RedisQueueBackendOptions): QueueBackend {
  const { prefix } = options;
  const keepCompleted = options.keepCompleted ?? DEFAULT_KEEP_COMPLETED;
  const enqueueTimeoutMs = options.enqueueTimeoutMs ?? DEFAULT_ENQUEUE_TIMEOUT_MS;
  const onError = options.onError ?? (() => {});

  // Producers fail fast when Redis is away (bounded retries per command, and enqueueTimeoutMs
  // while no connection was ever made); the caller decides what a lost enqueue means. Workers
  // must wait out an outage instead, which BullMQ requires as maxRetriesPerRequest: null.
  // Not lazyConnect: a lazy ioredis client whose first connect fails never reconnects, which
  // would leave the backend broken after Redis comes back.
  const producerConnection = new Redis(options.redisUrl, { maxRetriesPerRequest: 2 });
  const workerConnection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  producerConnection.on("error", onError);
  workerConnection.on("error", onError);

  const queues = new Map<string, Queue>();
  const workers = new Set<Worker>();
  let closing: Promise<void> | undefined;
  let producerClosed = false;

  const queueFor = (name: string): Queue => {
    let queue = queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: producerConnection, prefix });
      queue.on("error", onError);
      queues.set(name, queue);
    }
    return queue;
  };

  const queue: JobQueue = {
    async enqueue(queueName: string, name: string, payload: unknown, enqueueOptions?: EnqueueOptions): Promise<void> {
      if (producerClosed) throw new Error("queue is closed");
      checkEnqueue(queueName, name, enqueueOptions);
      await traceEnqueue(queueName, name, async (carrier) => {
        const jobOptions: JobsOptions = retryOptions(enqueueOptions?.retry ?? NO_RETRY);
        if (enqueueOptions?.delayMs) jobOptions.delay = enqueueOptions.delayMs;
        // BullMQ's own slot for propagated context: kept with the job's options, the payload untouched.
        if (carrier !== undefined) jobOptions.telemetry = { metadata: JSON.stringify(carrier) };
        // Our jobId is a BullMQ deduplication id, not a BullMQ job id. A custom BullMQ job id would
        // block every later enqueue for as long as the finished job is kept — forever once it has
        // failed, since failed jobs are never removed — and may not contain ':'. A deduplication id
        // (no ttl) is held only while the job is waiting, delayed or active, which is exactly the
        // contract in queue.ts, and accepts any string.
        if (enqueueOptions?.jobId !== undefined) jobOptions.deduplication = { id: enqueueOptions.jobId };
        await withTimeout(queueFor(queueName).add(name, payload, jobOptions), enqueueTimeoutMs, "enqueue timed out: Redis did not answer");
      });
    },
    async close(): Promise<void> {
      producerClosed = true;
      await Promise.all([...queues.values()].map((q) => q.close()));
    },
  };

  const work = (queueName: string, handler: JobHandler, workOptions: WorkOptions = {}): QueueWorker => {
    if (closing) throw new Error("queue backend is closed");
    const concurrency = checkConcurrency(workOptions.concurrency ?? 1);
    const traced = traceJob(queueName, handler);
    const worker = new Worker(
      queueName,
      async (job) => {
        try {
          // attemptsMade counts the attempts that already failed, so this one is attemptsMade + 1.
          await traced({ id: job.id ?? "", name: job.name, data: job.data, attempt: job.attemptsMade + 1 }, parseTraceCarrier(job.opts.telemetry?.metadata));
        } catch (err) {
          throw withCause(err);
        }
      },
      {
        connection: workerConnection,
        prefix,
        concurrency,
        maxStalledCount: MAX_STALLED_COUNT,
        settings: {
          backoffStrategy: (attemptsMade, _type, _err, job) => {
            const backoff = job?.opts.backoff as { delay?: number; maxDelay?: number } | undefined;
            return backoffDelay(
              { attempts: 0, backoffMs: backoff?.delay ?? 0, ...(backoff?.maxDelay !== undefined ? { maxBackoffMs: backoff.maxDelay } : {}) },
              attemptsMade,
            );
          },
        },
        ...(options.lockDurationMs !== undefined ? { lockDuration: options.lockDurationMs, stalledInterval: options.lockDurationMs } : {}),
      },
    );
    worker.on("error", onError);
    workers.add(worker);
    return {
      async close(): Promise<void> {
        // Without `force`, BullMQ waits for the jobs this worker is running before it resolves.
        await worker.close();
        workers.delete(worker);
      },
    };
  };

  /** Job options shared by enqueued and scheduled jobs: retries with exponential backoff, failures kept. */
  const retryOptions = (retry: RetryPolicy) => ({
    attempts: retry.attempts,
    // Computed by the worker's backoffStrategy, with the same rule as the in-process backend.
    backoff: { type: CAPPED_EXPONENTIAL, delay: retry.backoffMs, ...(retry.maxBackoffMs !== undefined ? { maxDelay: retry.maxBackoffMs } : {}) },
    removeOnComplete: { count: keepCompleted },
    // Failed jobs stay: they are the dead-letter view that counts().failed reports.
    removeOnFail: false,
  });

  const schedule = async (queueName: string, job: JobSchedule): Promise<void> => {
    if (closing) throw new Error("queue backend is closed");
    checkSchedule(queueName, job);
    // A job scheduler lives in Redis: upserting the same id again keeps its clock, so restarts and
    // replicas share one schedule. The first run falls on the next boundary of the interval.
    const upserted = queueFor(queueName).upsertJobScheduler(
      job.id,
      { every: job.everyMs, startDate: nextBoundary(Date.now(), job.everyMs) },
      { name: job.name, data: job.payload ?? {}, opts: retryOptions(job.retry ?? NO_RETRY) },
    );
    await withTimeout(upserted, enqueueTimeoutMs, "schedule timed out: Redis did not answer");
  };

  const counts = async (queueName: string): Promise<QueueCounts> => {
    const c = await queueFor(queueName).getJobCounts("waiting", "prioritized", "active", "delayed", "failed");
    return {
      waiting: (c.waiting ?? 0) + (c.prioritized ?? 0),
      active: c.active ?? 0,
      delayed: c.delayed ?? 0,
      failed: c.failed ?? 0,
    };
  };

  const deadLetters = async (queueName: string): Promise<DeadLetterCounts> => {
    const counts = emptyDeadLetterCounts();
    for (const job of await queueFor(queueName).getFailed(0, DEAD_LETTER_SCAN_LIMIT - 1)) counts[causeOf(job)] += 1;
    return counts;
  };

  const redrive = async (queueName: string, redriveOptions: RedriveOptions = {}): Promise<number> => {
    const limit = redriveOptions.limit ?? DEFAULT_REDRIVE_LIMIT;
    const queue = queueFor(queueName);
    let offset = 0;
    let moved = 0;
    while (moved < limit) {
      const page = await queue.getFailed(offset, offset + FAILED_PAGE - 1);
      if (page.length === 0) break;
      let kept = 0;
      for (const job of page) {
        if (moved >= limit || (redriveOptions.cause !== undefined && causeOf(job) !== redriveOptions.cause)) {
          kept += 1;
          continue;
        }
        // A fresh set of attempts: the outage that used up the last set is over, or the cause fixed.
        await job.retry("failed", { resetAttemptsMade: true, resetAttemptsStarted: true });
        moved += 1;
      }
      // Re-driven jobs leave the failed set; the ones kept are skipped next page.
      offset += kept;
      if (page.length < FAILED_PAGE) break;
    }
    return moved;
  };

  const close = (): Promise<void> => {
    closing ??= (async () => {
      // Stop intake and drain first, then the producers, then the shared connections they used.
      await Promise.all([...workers].map((w) => w.close()));
      workers.clear();
      await queue.close();
      await Promise.all([quit(workerConnection), quit(producerConnection)]);
    })();
    return closing;
  };

  return { queue, work, schedule, counts, deadLetters, redrive, close };
}

function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** QUIT when connected, otherwise just drop the socket (a never-used lazy connection has none). */
async function quit(connection: Redis): Promise<void> {
  if (connection.status === "ready") {
    try {
      await connection.quit();
      return;
    } catch {
      // Fall through: the connection is going away either way.
    }
  }
  connection.disconnect();
}
