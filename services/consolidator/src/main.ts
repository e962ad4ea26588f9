/** The consolidator process: read the environment, start, stop cleanly on SIGTERM. */
import { ConfigError, createLogger, guardProcess, loadConfig, onShutdown, startTracing, type Tracing } from "@3ngram/runtime";
import { consolidatorConfigSchema, type ConsolidatorConfig } from "./config.js";
import { startConsolidator } from "./consolidator.js";

/** Longer than the slowest job (two RPC deadlines plus an embedding request); k8s grace must exceed it. */
const SHUTDOWN_GRACE_MS = 60_000;

let config: ConsolidatorConfig;
let tracing: Tracing;
try {
  config = loadConfig(consolidatorConfigSchema);
  tracing = startTracing({ serviceName: "consolidator" });
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`consolidator: ${err.message}\n`);
  process.exit(1);
}

const log = createLogger({ service: "consolidator", level: config.logLevel });
guardProcess(log);
const consolidator = await startConsolidator(config, { log });
onShutdown(log, [() => consolidator.close(), () => tracing.shutdown()], SHUTDOWN_GRACE_MS);
