import type { Logger } from "pino";

export type Closer = () => Promise<void> | void;

/**
 * Runs the closers in order on SIGTERM/SIGINT (stop intake first, then drain, then close pools),
 * exits 0 when they finish and 1 if they fail or exceed the grace period.
 */
export function onShutdown(log: Logger, closers: Closer[], graceMs = 10_000): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, "shutting down");
    const timer = setTimeout(() => {
      log.error({ graceMs }, "shutdown exceeded grace period");
      process.exit(1);
    }, graceMs);
    timer.unref();
    try {
      for (const close of closers) await close();
      log.info("stopped");
      process.exit(0);
    } catch (err) {
      log.error({ error: errorSummary(err) }, "shutdown failed");
      process.exit(1);
    }
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
}

/** Error fields safe to log: the class, code and message of our own errors, never payloads. */
export function errorSummary(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { type: typeof err };
  const e = err as Error & { code?: unknown; reason?: unknown };
  return { type: e.name, message: e.message, code: e.code, reason: e.reason };
}
