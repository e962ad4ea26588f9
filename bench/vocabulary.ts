/** Words the generated corpora share (bench:search and the standalone/peers workload): teams and the things they decide about. */
export const SUBJECTS = ["billing", "search", "auth", "deploy", "onboarding", "analytics", "mobile", "storage", "payments", "alerts", "docs", "pricing"];

export const OBJECTS = [
  "the retry policy",
  "the cache layer",
  "PostgreSQL",
  "the queue",
  "the API gateway",
  "the nightly job",
  "feature flags",
  "the SDK",
  "rate limits",
  "the schema",
  "TLS certificates",
  "the dashboard",
];
