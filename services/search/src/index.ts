export { loadSearchConfig, searchConfigSchema } from "./config.js";
export { startSearchService, type RunningSearchService } from "./server.js";
export { SEARCH_POLICY, evidenceScore, type SearchPolicy } from "./domain/policy.js";
// The ranking's parts, for the retrieval evaluation (eval/retrieval/pools.ts): it gathers each
// query's candidate pool once and ranks it under many trial policies.
export { abstentionEvidence, candidatePoolSize, rank, shouldAbstain, type VerdictEvidence } from "./domain/policy.js";
export { gatherCandidates, type Candidate } from "./domain/candidates.js";
export { HNSW_FILTERED_SCAN } from "./db/candidates.js";
export { normaliseQuery } from "./in-process/query-embedder.js";
