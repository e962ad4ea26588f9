import type { FailureCause } from "./errors.js";

/**
 * The queue contract shared by the producer (memory service) and the consumer (consolidator).
 * Two backends implement it — BullMQ on Redis for distributed mode and an in-process queue for
 * standalone mode — so job code is identical in both.
 */

export interface RetryPolicy {
  attempts: number;
  /** First retry waits this long; each later one doubles it… */
  backoffMs: number;
  /** …up to this (no cap when absent). */
  maxBackoffMs?: number;
}

export interface EnqueueOptions {
  /** Jobs with the same id are not queued twice while one is waiting or running (idempotent enqueue). */
  jobId?: string;
  retry?: RetryPolicy;
  delayMs?: number;
}

export interface JobQueue {
  enqueue(queue: string, name: string, payload: unknown, options?: EnqueueOptions): Promise<void>;
  close(): Promise<void>;
}

export interface Job {
  id: string;
  name: string;
  data: unknown;
  /** 1 on the first try. */
  attempt: number;
}

export type JobHandler = (job: Job) => Promise<void>;

export interface QueueCounts {
  waiting: number;
  active: number;
  delayed: number;
  /** Jobs that used up their retries: the dead-letter view. */
  failed: number;
}

/** Dead-lettered jobs by why they failed. */
export type DeadLetterCounts = Record<FailureCause, number>;

export interface RedriveOptions {
  /** Only jobs that failed for this reason (default: every dead-lettered job). */
  cause?: FailureCause;
  /** At most this many jobs (default 10 000). */
  limit?: number;
}

export interface WorkOptions {
  /** How many jobs this worker runs at once. Default 1. */
  concurrency?: number;
}

/** A running consumer of one queue. */
export interface QueueWorker {
  /** Stops taking jobs and resolves once the jobs it is running have finished. */
  close(): Promise<void>;
}

/**
 * A job that repeats on a fixed interval. Runs fall on multiples of the interval since the Unix
 * epoch (hourly: at the top of each hour UTC; every 15 minutes: at :00, :15, :30, :45), the first
 * at the next such boundary, so every backend and every restart keeps the same clock.
 */
export interface JobSchedule {
  /** Stable id: scheduling the same id again replaces the schedule instead of adding a second one. */
  id: string;
  /** Job name and payload of every run. */
  name: string;
  payload?: unknown;
  everyMs: number;
  retry?: RetryPolicy;
}

/**
 * What both backends provide: the producer side (`queue`) for services that enqueue, and
 * consumers, schedules and counts for the consolidator. `close()` stops every worker (waiting for
 * their active jobs) and then releases connections and timers.
 */
export interface QueueBackend {
  readonly queue: JobQueue;
  work(queueName: string, handler: JobHandler, options?: WorkOptions): QueueWorker;
  /**
   * Repeats a job on `queueName`. BullMQ keeps schedules in Redis (they survive restarts and are
   * shared by every consolidator replica); the in-process backend keeps them until it closes.
   */
  schedule(queueName: string, schedule: JobSchedule): Promise<void>;
  counts(queueName: string): Promise<QueueCounts>;
  /** The dead letters by cause (BullMQ: counted over the newest 1 000; `counts().failed` is exact). */
  deadLetters(queueName: string): Promise<DeadLetterCounts>;
  /** Puts dead-lettered jobs back on the queue with a fresh set of attempts; resolves to how many. */
  redrive(queueName: string, options?: RedriveOptions): Promise<number>;
  close(): Promise<void>;
}
