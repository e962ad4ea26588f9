/**
 * Every bound on the public surfaces, defined once. MCP tools, REST routes and the services all
 * read these; the numbers follow the reference design so clients written for it keep working.
 */
export const MAX_CONTENT_LENGTH = 2000;
export const MAX_TOPIC_LENGTH = 256;
export const MAX_PROJECT_LENGTH = 256;
export const MAX_SCOPE_LENGTH = 64;
export const SCOPE_NAME_PATTERN = /^[a-z0-9][a-z0-9-]*$/;
export const DEFAULT_SCOPE = "personal";
export const MAX_TAGS = 32;
export const MAX_TAG_LENGTH = 64;

/**
 * How far ahead of the server's clock a caller's validFrom may lie: a client's clock that runs a
 * little fast is forgiven, a future event is not (valid time says when something happened).
 */
export const MAX_VALID_FROM_SKEW_MS = 5 * 60_000;

/** Search and excerpts. */
export const MAX_EXCERPT_LENGTH = 600;
export const DEFAULT_SEARCH_LIMIT = 5;
export const MAX_SEARCH_LIMIT = 25;
/** Not in the reference design (it had no cap); bounds the work one query can ask for. */
export const MAX_QUERY_LENGTH = 2000;

/** Batched reads. */
export const MAX_GET_MEMORIES_IDS = 20;
export const MIN_GET_CONTENT_CHARS = 600;
export const DEFAULT_GET_CONTENT_CHARS = 10_000;
export const MAX_GET_CONTENT_CHARS = 65_536;
/** ids × maxContentChars may not exceed this, so one response stays bounded. */
export const MAX_GET_TOTAL_CHARS = 262_144;

/** Request bodies larger than this are refused before parsing. */
export const MAX_REQUEST_BODY_BYTES = 1_000_000;
