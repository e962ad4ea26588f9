import type { FailureCause } from "./errors.js";
import type { EnqueueOptions, RetryPolicy } from "./queue.js";

/** Without a retry policy a job gets exactly one try. */
export const NO_RETRY: RetryPolicy = { attempts: 1, backoffMs: 0 };

/** Longest accepted job id; ids are built from a job kind and a UUID, far below this. */
const MAX_JOB_ID_LENGTH = 256;

/**
 * Both backends reject the same malformed options the same way, so code that works against the
 * in-process queue in standalone mode cannot fail on BullMQ in production (or the reverse).
 */
export function checkEnqueue(queue: string, name: string, options: EnqueueOptions | undefined): void {
  if (queue === "") throw new RangeError("queue name must not be empty");
  if (name === "") throw new RangeError("job name must not be empty");
  if (!options) return;
  const { jobId, retry, delayMs } = options;
  if (jobId !== undefined && (jobId === "" || jobId.length > MAX_JOB_ID_LENGTH)) {
    throw new RangeError(`jobId must be 1..${MAX_JOB_ID_LENGTH} characters`);
  }
  if (retry !== undefined) {
    if (!Number.isInteger(retry.attempts) || retry.attempts < 1) throw new RangeError("retry.attempts must be an integer >= 1");
    if (!Number.isFinite(retry.backoffMs) || retry.backoffMs < 0) throw new RangeError("retry.backoffMs must be >= 0");
    if (retry.maxBackoffMs !== undefined && (!Number.isFinite(retry.maxBackoffMs) || retry.maxBackoffMs < retry.backoffMs)) {
      throw new RangeError("retry.maxBackoffMs must be >= retry.backoffMs");
    }
  }
  if (delayMs !== undefined && (!Number.isFinite(delayMs) || delayMs < 0)) throw new RangeError("delayMs must be >= 0");
}

/** Delay before the retry that follows failed attempt number `failedAttempt` (1-based): base, 2×base, 4×base… up to the cap. */
export function backoffDelay(policy: RetryPolicy, failedAttempt: number): number {
  return Math.min(policy.backoffMs * 2 ** (failedAttempt - 1), policy.maxBackoffMs ?? Number.POSITIVE_INFINITY);
}

/** Dead letters looked at by deadLetters() and, per call, by redrive() unless it is given a limit. */
export const DEAD_LETTER_SCAN_LIMIT = 1_000;
export const DEFAULT_REDRIVE_LIMIT = 10_000;

/** A dead-letter count with every cause present. */
export function emptyDeadLetterCounts(): Record<FailureCause, number> {
  return { unavailable: 0, permanent: 0, error: 0 };
}

export function checkConcurrency(concurrency: number): number {
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError("concurrency must be an integer >= 1");
  return concurrency;
}

/** Shortest schedule interval accepted (tests use sub-second ones; production uses minutes). */
const MIN_SCHEDULE_INTERVAL_MS = 10;

export function checkSchedule(queue: string, schedule: { id: string; name: string; everyMs: number; retry?: RetryPolicy }): void {
  if (queue === "") throw new RangeError("queue name must not be empty");
  if (schedule.id === "" || schedule.id.length > MAX_JOB_ID_LENGTH) throw new RangeError(`schedule id must be 1..${MAX_JOB_ID_LENGTH} characters`);
  if (schedule.name === "") throw new RangeError("job name must not be empty");
  if (!Number.isInteger(schedule.everyMs) || schedule.everyMs < MIN_SCHEDULE_INTERVAL_MS) {
    throw new RangeError(`everyMs must be an integer >= ${MIN_SCHEDULE_INTERVAL_MS}`);
  }
  if (schedule.retry !== undefined) checkEnqueue(queue, schedule.name, { retry: schedule.retry });
}

/** The next run of an interval schedule: the first multiple of `everyMs` since the epoch after `now`. */
export function nextBoundary(now: number, everyMs: number): number {
  return (Math.floor(now / everyMs) + 1) * everyMs;
}
