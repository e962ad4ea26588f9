import type { Embedder } from "@3ngram/embeddings";
import { toVectorLiteral } from "@3ngram/db";

export interface StoredEmbedding {
  literal: string;
  model: string;
  dimensions: number;
}

/**
 * Embeds within a time budget. Any failure or timeout answers null: the write goes ahead without
 * a vector (full-text search still finds it) and a retry job fills it in later.
 */
export async function embedWithinBudget(
  embedder: Embedder | null,
  text: string,
  budgetMs: number,
): Promise<{ embedding: StoredEmbedding | null; failure?: "timeout" | "error" | "disabled" }> {
  if (!embedder || budgetMs <= 0) return { embedding: null, failure: "disabled" };
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => {
      abort.abort();
      resolve("timeout");
    }, budgetMs);
  });
  try {
    const outcome = await Promise.race([embedder.embed([text], { signal: abort.signal }), timeout]);
    if (outcome === "timeout") return { embedding: null, failure: "timeout" };
    const vector = outcome[0];
    if (!vector || vector.length !== embedder.dimensions) return { embedding: null, failure: "error" };
    return { embedding: { literal: toVectorLiteral(vector), model: embedder.model, dimensions: vector.length } };
  } catch {
    return { embedding: null, failure: "error" };
  } finally {
    clearTimeout(timer);
  }
}
