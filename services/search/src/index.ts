export { loadSearchConfig, searchConfigSchema, type SearchConfig } from "./config.js";
export { startSearchService, type RunningSearchService, type SearchServiceDeps } from "./server.js";
export { SEARCH_POLICY, type SearchPolicy } from "./domain/policy.js";
// The ranking's parts, for the retrieval evaluation's policy fitting (eval/retrieval/fit.ts):
// it gathers each query's candidate pool once and ranks it under many trial policies.
export {
  abstentionEvidence,
  candidatePoolSize,
  evidenceScore,
  type AbstentionEvidence,
  lexicalQueryText,
  matchesAnyTerm,
  rank,
  shouldAbstain,
  type CandidateFeatures,
} from "./domain/policy.js";
export { HNSW_FILTERED_SCAN, selectCandidates, type CandidateRow } from "./db/candidates.js";
export { normaliseQuery } from "./in-process/query-embedder.js";
