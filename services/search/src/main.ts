import { isTransientDatabaseError } from "@3ngram/db";
import { createLogger, errorSummary, guardProcess, onShutdown, startTracing } from "@3ngram/runtime";
import { loadSearchConfig } from "./config.js";
import { startSearchService } from "./search-service.js";

const config = loadSearchConfig();
const tracing = startTracing({ serviceName: "search" });
const log = createLogger({ service: "search", level: config.LOG_LEVEL });
guardProcess(log, { recoverable: isTransientDatabaseError });
try {
  const service = await startSearchService(config, { log });
  onShutdown(log, [() => service.close(), () => tracing.shutdown()]);
} catch (err) {
  log.fatal({ error: errorSummary(err) }, "search service failed to start");
  process.exit(1);
}
