/**
 * Search answers in the public shape (through the bridge): a page's hits are all full or all
 * compact, a union TypeScript cannot narrow by looking at one hit.
 */
import type { SearchHit, SearchOutput } from "@3ngram/schema";

/** The hits of a full-projection page; a compact page fails the test rather than reading as undefined fields. */
export function fullHits(page: Pick<SearchOutput, "hits">): SearchHit[] {
  const compact = page.hits.find((hit) => !("contentLength" in hit));
  if (compact !== undefined) throw new Error(`expected full hits, got a compact one: ${JSON.stringify(compact)}`);
  return page.hits as SearchHit[];
}
