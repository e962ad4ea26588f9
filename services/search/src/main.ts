/** The search service process: read the environment, start, stop cleanly on SIGTERM. */
import { isTransientDatabaseError } from "@3ngram/db";
import { serviceMain } from "@3ngram/runtime";
import { loadSearchConfig } from "./config.js";
import { startSearchService } from "./search-service.js";

await serviceMain({
  name: "search",
  loadConfig: () => loadSearchConfig(),
  logLevel: (config) => config.LOG_LEVEL,
  start: (config, log) => startSearchService(config, { log }),
  recoverable: isTransientDatabaseError,
});
