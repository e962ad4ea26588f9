/**
 * Whether an HTTP answer from an upstream API (an OpenAI-compatible embeddings or chat server) is
 * worth asking again. One rule for every client of such APIs, so they cannot drift apart: timeouts
 * (408), conflicts a retry resolves (409, e.g. a model still loading), throttling (429) and server
 * errors (5xx) pass; anything else (a bad key, an unknown model, a refused input) will be refused
 * again and is permanent.
 */
export function isRetryableUpstreamStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}
