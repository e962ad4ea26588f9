import type { EmbedPurpose } from "./bundled-models.js";
import type { Embedder } from "./embedder.js";

/** A vector, or why there is none: no model (or no budget), the budget ran out, or the model failed. */
export type BudgetedVector = { vector: number[] } | { vector: null; failure: "disabled" | "timeout" | "error"; error?: unknown };

/**
 * Embeds one text within a time budget, for the callers that must answer anyway: a write goes ahead
 * without its vector (a retry job fills it in), a search runs without its vector leg. Past the
 * budget the model's call is aborted; a vector of the wrong length counts as a failure. Never throws.
 */
export async function embedWithinBudget(
  embedder: Embedder | null,
  text: string,
  budgetMs: number,
  purpose: EmbedPurpose = "document",
): Promise<BudgetedVector> {
  if (!embedder || budgetMs <= 0) return { vector: null, failure: "disabled" };
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => {
      // Settle first: a model that rejects synchronously on abort must not turn a timeout into an error.
      resolve("timeout");
      abort.abort();
    }, budgetMs);
  });
  try {
    const outcome = await Promise.race([embedder.embed([text], { signal: abort.signal, purpose }), timeout]);
    if (outcome === "timeout") return { vector: null, failure: "timeout" };
    const vector = outcome[0];
    if (!vector || vector.length !== embedder.dimensions) return { vector: null, failure: "error" };
    return { vector };
  } catch (error) {
    return { vector: null, failure: "error", error };
  } finally {
    clearTimeout(timer);
  }
}
