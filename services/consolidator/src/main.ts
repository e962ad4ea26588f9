/** The consolidator process: read the environment, start, stop cleanly on SIGTERM. */
import { loadConfig, serviceMain } from "@3ngram/runtime";
import { consolidatorConfigSchema } from "./config.js";
import { startConsolidator } from "./server.js";

/** Longer than the slowest job (two RPC deadlines plus an embedding request); k8s grace must exceed it. */
const SHUTDOWN_GRACE_MS = 60_000;

await serviceMain({
  name: "consolidator",
  loadConfig: () => loadConfig(consolidatorConfigSchema),
  logLevel: (config) => config.logLevel,
  start: (config, log) => startConsolidator(config, { log }),
  shutdownGraceMs: SHUTDOWN_GRACE_MS,
});
