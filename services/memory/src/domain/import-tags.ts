/**
 * Tags for records read from another server's file. Foreign tags follow no rules of ours, so the
 * ones we cannot hold are left out rather than refusing the whole record.
 */
import { MAX_TAG_LENGTH, MAX_TAGS } from "@3ngram/schema";

/**
 * The candidates in order, trimmed: non-strings, blanks, tags longer than a tag may be and repeats
 * are dropped, and the list stops at our tag count (so put the ones that matter most first).
 */
export function importTags(candidates: readonly unknown[]): string[] {
  const tags: string[] = [];
  for (const candidate of candidates) {
    if (typeof candidate !== "string") continue;
    const tag = candidate.trim();
    if (tag === "" || tag.length > MAX_TAG_LENGTH || tags.includes(tag)) continue;
    tags.push(tag);
    if (tags.length === MAX_TAGS) break;
  }
  return tags;
}
