export { startStandalone, type RunningStandalone, type StandaloneOptions } from "./standalone.js";
export { startEmbeddedPostgres, type EmbeddedPostgres } from "./db/embedded-postgres.js";
export { readIdentity, type StandaloneIdentity } from "./data-dir.js";
export { STANDALONE_MALLOC_ARENA_MAX, STANDALONE_MALLOC_MMAP_THRESHOLD } from "./malloc-arenas.js";
export { STANDALONE_MAX_SEMI_SPACE_MB } from "./v8-heap-sizing.js";
