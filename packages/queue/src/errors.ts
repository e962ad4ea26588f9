import { JOB_FAILURE_CAUSES, type JobFailureCause } from "@3ngram/schema";

/**
 * Thrown by a job handler when trying again cannot help — a malformed payload, an unknown job
 * name, a request the peer refuses as invalid. The job goes straight to the failed (dead-letter)
 * set instead of using up its remaining attempts. Any other error is treated as transient and
 * retried with backoff.
 */
export class PermanentJobError extends Error {
  override readonly name = "PermanentJobError";

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * Thrown by a job handler when something it needs is away for now — a peer restarting, the
 * database down. Retried with backoff like any failure; a job whose attempts run out this way is
 * dead-lettered with the cause `unavailable`, which is worth re-driving once the outage is over.
 */
export class UnavailableJobError extends Error {
  override readonly name = "UnavailableJobError";

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Why a dead-lettered job failed; the list is public (describe_environment reports it), so it lives in @3ngram/schema. */
export const FAILURE_CAUSES = JOB_FAILURE_CAUSES;
export type FailureCause = JobFailureCause;

export function failureCause(err: unknown): FailureCause {
  if (err instanceof PermanentJobError) return "permanent";
  if (err instanceof UnavailableJobError) return "unavailable";
  return "error";
}
