/**
 * Raised when an embedding provider fails. Messages and fields never contain the
 * texts being embedded or any credential, so they are safe to log.
 */
export class EmbeddingsError extends Error {
  override readonly name = "EmbeddingsError";
  /** Provider that failed, e.g. "openai". */
  readonly provider: string;
  /** HTTP status, when the failure was an HTTP response. */
  readonly status: number | undefined;
  /** True for failures worth retrying later (timeouts, network errors, 408/409/429/5xx). */
  readonly retryable: boolean;

  constructor(message: string, details: { provider: string; status?: number; retryable?: boolean; cause?: unknown }) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.provider = details.provider;
    this.status = details.status;
    this.retryable = details.retryable ?? false;
  }
}
