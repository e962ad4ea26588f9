export { loadSearchConfig, searchConfigSchema, type SearchConfig } from "./config.js";
export { startSearchService, type RunningSearchService, type SearchServiceDeps } from "./search-service.js";
export { SEARCH_POLICY, type SearchPolicy } from "./domain/policy.js";
