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
