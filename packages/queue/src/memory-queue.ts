/**
 * The in-process backend for standalone mode: the same contract as the BullMQ backend, with the
 * jobs held in this process's memory. Jobs that are waiting or scheduled when the process stops
 * are lost; the producer side must therefore treat the queue as best effort (the memory service
 * keeps the memory as `embedded: "pending"`, so nothing the user stored is lost with it).
 */
import { PermanentJobError, failureCause, type FailureCause } from "./errors.js";
import { traceEnqueue, traceJob, type TraceCarrier } from "./trace-context.js";
import {
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
  Job,
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

interface StoredJob {
  readonly id: string;
  readonly name: string;
  readonly data: unknown;
  readonly retry: RetryPolicy;
  readonly dedupeId: string | undefined;
  /** The producer's trace context, continued by the consumer's span. */
  readonly trace: TraceCarrier | undefined;
  /** Attempts that have failed so far. */
  failures: number;
  /** Set once the job is dead-lettered. */
  cause?: FailureCause;
}

interface Consumer {
  readonly handler: (job: Job, carrier: TraceCarrier | undefined) => Promise<void>;
  readonly concurrency: number;
  readonly running: Set<Promise<void>>;
  closing: boolean;
}

/** FIFO with O(1) take: Array#shift copies the whole array, which is quadratic over a large backlog. */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  take(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined as T;
    // Drop the consumed prefix once it is both large and most of the array.
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}

interface QueueState {
  readonly waiting: Fifo<StoredJob>;
  readonly consumers: Set<Consumer>;
  /** Ids of jobs that are waiting, delayed or active; released when the job completes or fails for good. */
  readonly pendingIds: Set<string>;
  delayed: number;
  active: number;
  /** The dead letters, oldest first, kept so they can be counted by cause and re-driven. */
  readonly failed: StoredJob[];
}

export function createMemoryQueueBackend(): QueueBackend {
  const queues = new Map<string, QueueState>();
  const timers = new Set<NodeJS.Timeout>();
  /** The pending timer of each schedule, by queue and schedule id. */
  const scheduled = new Map<string, NodeJS.Timeout>();
  let nextId = 1;
  let closed = false;
  let producerClosed = false;

  const stateOf = (name: string): QueueState => {
    let state = queues.get(name);
    if (!state) {
      state = { waiting: new Fifo(), consumers: new Set(), pendingIds: new Set(), delayed: 0, active: 0, failed: [] };
      queues.set(name, state);
    }
    return state;
  };

  /** Runs `fn` after `ms`, unless the backend closes first. */
  const later = (ms: number, fn: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };

  const schedule = (state: QueueState, job: StoredJob, delayMs: number): void => {
    if (delayMs <= 0) {
      state.waiting.push(job);
      pump(state);
      return;
    }
    state.delayed += 1;
    later(delayMs, () => {
      state.delayed -= 1;
      state.waiting.push(job);
      pump(state);
    });
  };

  /** Hands waiting jobs to consumers with free slots. */
  const pump = (state: QueueState): void => {
    for (const consumer of state.consumers) {
      while (!closed && !consumer.closing && consumer.running.size < consumer.concurrency) {
        const job = state.waiting.take();
        if (!job) return;
        start(state, consumer, job);
      }
    }
  };

  const start = (state: QueueState, consumer: Consumer, job: StoredJob): void => {
    state.active += 1;
    const view: Job = { id: job.id, name: job.name, data: job.data, attempt: job.failures + 1 };
    const run = (async () => {
      try {
        await consumer.handler(view, job.trace);
        return undefined;
      } catch (err) {
        return { err };
      }
    })().then((failure) => {
      state.active -= 1;
      consumer.running.delete(run);
      finish(state, job, failure?.err, failure !== undefined);
      pump(state);
    });
    consumer.running.add(run);
  };

  const finish = (state: QueueState, job: StoredJob, err: unknown, failed: boolean): void => {
    if (!failed) {
      release(state, job);
      return;
    }
    job.failures += 1;
    const exhausted = job.failures >= job.retry.attempts;
    if (err instanceof PermanentJobError || exhausted || closed) {
      // A job that fails while the backend is closing is not retried: there is nobody left to run it.
      job.cause = failureCause(err);
      state.failed.push(job);
      release(state, job);
      return;
    }
    schedule(state, job, backoffDelay(job.retry, job.failures));
  };

  const release = (state: QueueState, job: StoredJob): void => {
    if (job.dedupeId !== undefined) state.pendingIds.delete(job.dedupeId);
  };

  /** Adds one job (deduplicated by jobId while it is pending). */
  const add = (queueName: string, name: string, payload: unknown, options?: EnqueueOptions, trace?: TraceCarrier): void => {
    const state = stateOf(queueName);
    const dedupeId = options?.jobId;
    if (dedupeId !== undefined) {
      if (state.pendingIds.has(dedupeId)) return;
      state.pendingIds.add(dedupeId);
    }
    const job: StoredJob = {
      id: String(nextId++),
      name,
      // BullMQ stores payloads as JSON; round-tripping here gives handlers the same shapes in both modes.
      data: payload === undefined ? undefined : JSON.parse(JSON.stringify(payload)),
      retry: options?.retry ?? NO_RETRY,
      dedupeId,
      trace,
      failures: 0,
    };
    schedule(state, job, options?.delayMs ?? 0);
  };

  const queue: JobQueue = {
    async enqueue(queueName: string, name: string, payload: unknown, options?: EnqueueOptions): Promise<void> {
      if (closed || producerClosed) throw new Error("queue is closed");
      checkEnqueue(queueName, name, options);
      await traceEnqueue(queueName, name, async (carrier) => add(queueName, name, payload, options, carrier));
    },
    // Only stops intake: jobs already queued still run until the backend itself closes.
    async close(): Promise<void> {
      producerClosed = true;
    },
  };

  const work = (queueName: string, handler: JobHandler, options: WorkOptions = {}): QueueWorker => {
    if (closed) throw new Error("queue backend is closed");
    const state = stateOf(queueName);
    const consumer: Consumer = {
      handler: traceJob(queueName, handler),
      concurrency: checkConcurrency(options.concurrency ?? 1),
      running: new Set(),
      closing: false,
    };
    state.consumers.add(consumer);
    // Start on the next tick so a caller can finish wiring (metrics, logs) before the first job runs.
    queueMicrotask(() => pump(state));
    return {
      async close(): Promise<void> {
        consumer.closing = true;
        state.consumers.delete(consumer);
        while (consumer.running.size > 0) await Promise.all(consumer.running);
      },
    };
  };

  /**
   * Arms a timer for the next boundary of the interval; each tick queues one run and re-arms.
   * A run still waiting or running absorbs the next tick (one pending run per schedule).
   */
  const repeat = async (queueName: string, job: JobSchedule): Promise<void> => {
    if (closed) throw new Error("queue backend is closed");
    checkSchedule(queueName, job);
    const key = `${queueName}\u0000${job.id}`;
    const arm = () => {
      const previous = scheduled.get(key);
      if (previous) {
        clearTimeout(previous);
        timers.delete(previous);
      }
      const now = Date.now();
      const timer = setTimeout(
        () => {
          timers.delete(timer);
          scheduled.delete(key);
          if (closed) return;
          add(queueName, job.name, job.payload ?? {}, { jobId: `schedule:${job.id}`, ...(job.retry ? { retry: job.retry } : {}) });
          arm();
        },
        nextBoundary(now, job.everyMs) - now,
      );
      // A schedule alone never keeps the process alive.
      timer.unref();
      timers.add(timer);
      scheduled.set(key, timer);
    };
    arm();
  };

  const counts = async (queueName: string): Promise<QueueCounts> => {
    const state = stateOf(queueName);
    return { waiting: state.waiting.size, active: state.active, delayed: state.delayed, failed: state.failed.length };
  };

  const deadLetters = async (queueName: string): Promise<DeadLetterCounts> => {
    const counts = emptyDeadLetterCounts();
    for (const job of stateOf(queueName).failed) counts[job.cause ?? "error"] += 1;
    return counts;
  };

  /** Back to waiting with no failed attempts; a job whose id is pending again is already covered. */
  const redrive = async (queueName: string, options: RedriveOptions = {}): Promise<number> => {
    const state = stateOf(queueName);
    const limit = options.limit ?? DEFAULT_REDRIVE_LIMIT;
    const chosen = state.failed.filter((job) => options.cause === undefined || job.cause === options.cause).slice(0, limit);
    const set = new Set(chosen);
    state.failed.splice(0, state.failed.length, ...state.failed.filter((job) => !set.has(job)));
    for (const job of chosen) {
      if (job.dedupeId !== undefined) {
        if (state.pendingIds.has(job.dedupeId)) continue;
        state.pendingIds.add(job.dedupeId);
      }
      job.failures = 0;
      delete job.cause;
      schedule(state, job, 0);
    }
    return chosen.length;
  };

  const close = async (): Promise<void> => {
    closed = true;
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    scheduled.clear();
    const running: Promise<void>[] = [];
    for (const state of queues.values()) {
      for (const consumer of state.consumers) {
        consumer.closing = true;
        running.push(...consumer.running);
      }
      state.consumers.clear();
    }
    await Promise.all(running);
  };

  return { queue, work, schedule: repeat, counts, deadLetters, redrive, close };
}
