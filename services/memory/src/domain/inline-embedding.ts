import { embedWithinBudget as embedVectorWithinBudget, type Embedder } from "@3ngram/embeddings";
import { toVectorBinary } from "@3ngram/db";

export interface StoredEmbedding {
  /** pgvector's binary wire form (toVectorBinary): the server need not parse hundreds of decimals per write. */
  binary: Buffer;
  model: string;
  dimensions: number;
}

/**
 * Embeds a memory within the inline budget. Any failure or timeout answers null: the write goes
 * ahead without a vector (full-text search still finds it) and a retry job fills it in later.
 */
export async function embedWithinBudget(
  embedder: Embedder | null,
  text: string,
  budgetMs: number,
): Promise<{ embedding: StoredEmbedding | null; failure?: "timeout" | "error" | "disabled" }> {
  const outcome = await embedVectorWithinBudget(embedder, text, budgetMs);
  if (outcome.vector === null) return { embedding: null, failure: outcome.failure };
  return { embedding: { binary: toVectorBinary(outcome.vector), model: embedder!.model, dimensions: outcome.vector.length } };
}
