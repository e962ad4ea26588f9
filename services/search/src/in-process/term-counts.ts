import { LRUCache } from "lru-cache";
import type { Counter, Registry } from "prom-client";
import { cacheLookupCounter } from "./cache-lookups.js";
import type { Eligibility } from "../db/eligibility.js";

export interface TermCountCacheOptions {
  /** Most (tenant, filters, word) counts kept; 0 disables the cache. */
  maxEntries: number;
  /** How long a count is trusted. */
  ttlMs: number;
  registry?: Registry | undefined;
  /** Clock for the time-to-live (tests); performance.now() by default. */
  now?: () => number;
}

/**
 * Remembers, per tenant and filter set, how many eligible memories hold a query word (counted up
 * to the probe's cap). Counting a common word means reading rows until the cap is reached, which
 * made the probe the second most expensive step of a search at 100k memories; an agent's queries
 * reuse their vocabulary, so most counts repeat.
 *
 * Only positive counts are kept. A cached count can be stale for at most ttlMs, which moves only
 * whether a word counts as "too common" or as present for the abstention evidence; a word absent
 * from the cache (never seen, or counted zero) is always counted afresh, so a memory just written
 * with a new word is found by the very next search.
 */
export class TermCountCache {
  private readonly cache: LRUCache<string, number> | null;
  private readonly lookups: Counter<"outcome"> | undefined;

  constructor(options: TermCountCacheOptions) {
    this.cache =
      options.maxEntries > 0
        ? new LRUCache<string, number>({
            max: options.maxEntries,
            ttl: options.ttlMs,
            ...(options.now ? { perf: { now: options.now }, ttlResolution: 0 } : {}),
          })
        : null;
    this.lookups = cacheLookupCounter(
      options.registry,
      "threengram_search_term_count_cache_total",
      "Term-count cache lookups in the full-text probe, by outcome (hit or miss)",
    );
  }

  /** The cached counts (made with this cap) for these words, undefined where unknown, in order. */
  lookup(eligibility: Eligibility, cap: number, lexemes: readonly string[]): (number | undefined)[] {
    if (!this.cache) return lexemes.map(() => undefined);
    const prefix = filterKey(eligibility, cap);
    return lexemes.map((lexeme) => {
      const count = this.cache!.get(prefix + lexeme);
      this.lookups?.inc({ outcome: count === undefined ? "miss" : "hit" });
      return count;
    });
  }

  remember(eligibility: Eligibility, cap: number, lexemes: readonly string[], counts: readonly number[]): void {
    if (!this.cache) return;
    const prefix = filterKey(eligibility, cap);
    lexemes.forEach((lexeme, i) => {
      if (counts[i]! > 0) this.cache!.set(prefix + lexeme, counts[i]!);
    });
  }
}

/** Everything that decides a count: tenant, every filter, and the cap counting stopped at. */
function filterKey(e: Eligibility, cap: number): string {
  return (
    JSON.stringify([
      cap,
      e.tenantId,
      e.memoryTypes,
      e.scopeNames,
      e.projects,
      e.status,
      e.recordedAfter,
      e.recordedBefore,
      e.asOf?.validAt ?? null,
      e.asOf?.asKnownAt ?? null,
    ]) + "\u0000"
  );
}
