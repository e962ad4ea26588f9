import { vectorParam } from "@3ngram/db";
import { embedWithinBudget, type Embedder } from "@3ngram/embeddings";
import type { Logger } from "@3ngram/runtime";
import { LRUCache } from "lru-cache";
import type { Counter, Registry } from "prom-client";
import { cacheLookupCounter } from "./cache-lookups.js";
import type { QueryVector } from "../db/candidates.js";

/** The text a query is embedded (and cached) as: trimmed, runs of whitespace folded to one space. */
export function normaliseQuery(query: string): string {
  return query.trim().replace(/\s+/g, " ");
}

export interface QueryEmbedderOptions {
  /** Null: no model configured; every search answers from full text and recency. */
  embedder: Embedder | null;
  /** A query that cannot be embedded within this budget runs without the vector leg. */
  budgetMs: number;
  /** Most recent distinct queries kept; 0 disables the cache. */
  cacheSize: number;
  log: Logger;
  /** Where the cache's hit/miss counter is registered. */
  registry?: Registry | undefined;
  /**
   * False while the model is still loading after a start (model-warmup.ts): a query then runs
   * without the vector leg at once rather than waiting for the load. Absent: always ready.
   */
  modelReady?: () => boolean;
}

/**
 * Embeds search queries within a time budget, with a bounded LRU of recent query vectors keyed by
 * model and normalised query, so a repeated query skips the model. Failures (timeouts, provider
 * errors, wrong dimension) answer null and are not cached: the next identical query tries again.
 */
export class QueryEmbedder {
  private readonly cache: LRUCache<string, QueryVector> | null;
  private readonly lookups: Counter<"outcome"> | undefined;

  constructor(private readonly options: QueryEmbedderOptions) {
    this.cache = options.cacheSize > 0 ? new LRUCache<string, QueryVector>({ max: options.cacheSize }) : null;
    this.lookups = cacheLookupCounter(
      options.registry,
      "threengram_search_query_embedding_cache_total",
      "Query-embedding cache lookups, by outcome (hit or miss)",
    );
  }

  /**
   * Whether the model runs in this process (the bundled model on a worker thread or the event
   * loop, or the hashing embedder; see Embedder.remote), so a search may open its transaction while
   * the query is embedded: the wait is the model's few milliseconds, never a network round trip.
   */
  get inProcess(): boolean {
    return this.options.embedder !== null && this.options.embedder.remote !== true;
  }

  /** The model and length of the vectors queries are embedded as; null without a model. */
  get vectorSet(): { model: string; dimensions: number } | null {
    const embedder = this.options.embedder;
    return embedder ? { model: embedder.model, dimensions: embedder.dimensions } : null;
  }

  async embed(query: string): Promise<QueryVector | null> {
    const embedder = this.options.embedder;
    if (!embedder) return null;
    const text = normaliseQuery(query);
    const key = `${embedder.model}\u0000${text}`;
    const cached = this.cache?.get(key);
    if (cached) {
      this.lookups?.inc({ outcome: "hit" });
      return cached;
    }
    this.lookups?.inc({ outcome: "miss" });
    if (this.options.modelReady?.() === false) return null;
    const vector = await this.vectorFor(embedder, text);
    if (vector) this.cache?.set(key, vector);
    return vector;
  }

  private async vectorFor(embedder: Embedder, text: string): Promise<QueryVector | null> {
    const outcome = await embedWithinBudget(embedder, text, this.options.budgetMs, "query");
    if (outcome.vector !== null) return vectorParam(outcome.vector, embedder.model);
    if (outcome.failure !== "disabled") {
      const error = outcome.failure === "timeout" ? "timeout" : outcome.error instanceof Error ? outcome.error.name : "wrong dimensions";
      this.options.log.warn({ error }, "query embedding failed; vector leg unavailable");
    }
    return null;
  }
}
