import type { Logger } from "pino";
import { ConfigError } from "./config.js";
import { createLogger } from "./logger.js";
import { guardProcess, type ProcessGuardOptions } from "./process-guard.js";
import { errorSummary, onShutdown } from "./shutdown.js";
import { startTracing, type Tracing } from "./tracing.js";

type LogLevel = Parameters<typeof createLogger>[0]["level"];

/** What a service's main.ts says about itself; serviceMain does the rest the same way for every service. */
export interface ServiceMain<C> {
  /** The service's name, in logs, traces and the configuration error's first word. */
  name: string;
  /** Reads the environment; a ConfigError ends the process with its message (exit 1). */
  loadConfig(): C;
  logLevel(config: C): LogLevel;
  /** Starts serving; what it answers is closed on SIGTERM/SIGINT, before tracing. */
  start(config: C, log: Logger): Promise<{ close(): Promise<void> }>;
  /** Uncaught errors the process survives (guardProcess). */
  recoverable?: ProcessGuardOptions["recoverable"];
  /** How long shutdown may take before the process exits 1 (onShutdown's default otherwise). */
  shutdownGraceMs?: number;
}

/**
 * The life of a service process, one way for all: read the configuration (a bad value ends the
 * process with one message naming every offending variable, exit 1), start tracing before any
 * client or server exists so every span lands under its provider, log, guard against stray
 * errors, start (a failure is logged and ends the process, exit 1), and close cleanly on a signal.
 */
export async function serviceMain<C>(main: ServiceMain<C>): Promise<void> {
  let config: C;
  let tracing: Tracing;
  try {
    config = main.loadConfig();
    // The tracing variables are configuration too (an unknown exporter is a ConfigError).
    tracing = startTracing({ serviceName: main.name });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${main.name}: ${err.message}\n`);
    process.exit(1);
  }
  const log = createLogger({ service: main.name, level: main.logLevel(config) });
  guardProcess(log, main.recoverable === undefined ? {} : { recoverable: main.recoverable });
  try {
    const service = await main.start(config, log);
    onShutdown(log, [() => service.close(), () => tracing.shutdown()], main.shutdownGraceMs);
  } catch (err) {
    log.fatal({ error: errorSummary(err) }, `${main.name} failed to start`);
    process.exit(1);
  }
}
