/** The search service process: read the environment, start, stop cleanly on SIGTERM. */
import { isTransientDatabaseError } from "@3ngram/db";
import { serviceMain } from "@3ngram/runtime";
import { loadSearchConfig } from "./config.js";
import { startSearchService } from "./server.js";

await serviceMain({
  name: "search",
  loadConfig: () => loadSearchConfig(),
  logLevel: (config) => config.logLevel,
  start: (config, log) => startSearchService(config, { log }),
  recoverable: isTransientDatabaseError,
});
