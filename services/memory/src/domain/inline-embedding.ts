import { embedWithinBudget, type Embedder } from "@3ngram/embeddings";
import { vectorParam, type VectorParam } from "@3ngram/db";

/** An embedding ready to store: pgvector's binary form, with its model and length. */
export type StoredEmbedding = VectorParam;

/**
 * Embeds a memory within the inline budget. Any failure or timeout answers null: the write goes
 * ahead without a vector (full-text search still finds it) and a retry job fills it in later.
 */
export async function embedMemoryInline(
  embedder: Embedder | null,
  text: string,
  budgetMs: number,
): Promise<{ embedding: StoredEmbedding | null; failure?: "timeout" | "error" | "disabled" }> {
  const outcome = await embedWithinBudget(embedder, text, budgetMs);
  if (outcome.vector === null) return { embedding: null, failure: outcome.failure };
  return { embedding: vectorParam(outcome.vector, embedder!.model) };
}
