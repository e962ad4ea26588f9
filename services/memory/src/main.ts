import { isTransientDatabaseError } from "@3ngram/db";
import { createLogger, errorSummary, guardProcess, onShutdown, startTracing } from "@3ngram/runtime";
import { loadMemoryConfig } from "./config.js";
import { startMemoryService } from "./memory-service.js";

const config = loadMemoryConfig();
const tracing = startTracing({ serviceName: "memory" });
const log = createLogger({ service: "memory", level: config.LOG_LEVEL });
guardProcess(log, { recoverable: isTransientDatabaseError });
try {
  const service = await startMemoryService(config, { log });
  onShutdown(log, [() => service.close(), () => tracing.shutdown()]);
} catch (err) {
  log.fatal({ error: errorSummary(err) }, "memory service failed to start");
  process.exit(1);
}
