/** The memory service process: read the environment, start, stop cleanly on SIGTERM. */
import { isTransientDatabaseError } from "@3ngram/db";
import { serviceMain } from "@3ngram/runtime";
import { loadMemoryConfig } from "./config.js";
import { startMemoryService } from "./server.js";

await serviceMain({
  name: "memory",
  loadConfig: () => loadMemoryConfig(),
  logLevel: (config) => config.logLevel,
  start: (config, log) => startMemoryService(config, { log }),
  recoverable: isTransientDatabaseError,
});
