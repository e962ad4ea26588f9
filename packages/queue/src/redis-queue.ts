/**
 * The distributed backend: BullMQ on Redis. Every key lives under `prefix` (BullMQ writes
 * `<prefix>:<queue>:…`), so deployments, and test runs, sharing one Redis never see each
 * other's jobs.
 */
import { Queue, UnrecoverableError, Worker, type JobsOptions } from "bullmq";
import { Redis } from "ioredis";
import { PermanentJobError } from "./errors.js";
import { parseTraceCarrier, traceEnqueue, traceJob } from "./trace-context.js";
import { NO_RETRY, checkConcurrency, checkEnqueue, checkSchedule, nextBoundary } from "./options.js";
import type { EnqueueOptions, JobHandler, JobQueue, JobSchedule, QueueBackend, QueueCounts, QueueWorker, RetryPolicy, WorkOptions } from "./queue.js";

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
const DEFAULT_ENQUEUE_TIMEOUT_MS = 5000;

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
          // BullMQ skips the remaining attempts only for its own error class.
          if (err instanceof PermanentJobError) throw new UnrecoverableError(err.message);
          throw err;
        }
      },
      {
        connection: workerConnection,
        prefix,
        concurrency,
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
    backoff: { type: "exponential", delay: retry.backoffMs },
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

  return { queue, work, schedule, counts, close };
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
