import type { Logger } from "pino";
import { errorSummary } from "./shutdown.js";

export interface ProcessGuardOptions {
  /**
   * Uncaught errors this accepts are logged and survived: a dropped database connection whose
   * late 'error' event escaped its owner leaves nothing half-done, and the pool reconnects.
   */
  recoverable?: (err: unknown) => boolean;
}

/**
 * The process-wide policy for failures nothing else caught. A rejected promise nobody awaited is
 * logged, never fatal: request and job paths handle their own errors, so what arrives here is a
 * lost side task, not broken state. An uncaught exception ends the process (exit 1, so the
 * supervisor restarts it) unless `recoverable` says it is a known transient connection failure.
 * Install it once, first thing in main.
 */
export function guardProcess(log: Logger, options: ProcessGuardOptions = {}): void {
  process.on("unhandledRejection", (reason) => {
    log.error({ error: errorSummary(reason) }, "unhandled promise rejection (kept running)");
  });
  process.on("uncaughtException", (err) => {
    if (options.recoverable?.(err)) {
      log.error({ error: errorSummary(err) }, "connection failure escaped its owner (kept running)");
      return;
    }
    log.fatal({ error: errorSummary(err) }, "uncaught exception; exiting");
    process.exit(1);
  });
}
