import { uuidv7 } from "uuidv7";
import { AppError } from "@3ngram/errors";
import { vectorParam, withTenant } from "@3ngram/db";
import { insertEvent, updateEmbedding } from "../db/memories.js";
import type { Actor, MemoryDeps } from "./deps.js";

/** pgvector's HNSW index accepts at most 2000 dimensions for the vector type. */
const MAX_INDEXED_DIMENSIONS = 2000;

/**
 * Stores an embedding computed out of band. Idempotent: a second call with the same model is a
 * no-op (stored: false); a different model replaces the vector (a model change re-embeds).
 */
export async function storeEmbedding(
  deps: MemoryDeps,
  actor: Actor,
  input: { memoryId: string; model: string; vector: readonly number[] },
): Promise<{ stored: boolean }> {
  if (!/^[\w.:/-]{1,128}$/.test(input.model)) throw new AppError("invalid_input", "model: must be a model id", { field: "model" });
  if (input.vector.length === 0 || input.vector.length > MAX_INDEXED_DIMENSIONS) {
    throw new AppError("invalid_input", `vector: must have 1–${MAX_INDEXED_DIMENSIONS} dimensions`, { field: "vector" });
  }
  if (!input.vector.every(Number.isFinite)) throw new AppError("invalid_input", "vector: must be finite numbers", { field: "vector" });
  const embedding = vectorParam(input.vector, input.model);
  return withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId }, async (db) => {
    const outcome = await updateEmbedding(db, actor.tenantId, input.memoryId, embedding);
    if (outcome === "missing") throw new AppError("not_found", `memory ${input.memoryId} not found`);
    if (outcome === "stored") {
      await insertEvent(db, {
        id: uuidv7(),
        tenantId: actor.tenantId,
        memoryId: input.memoryId,
        kind: "embed_done",
        actor: actor.kind,
        payload: { model: input.model, dimensions: input.vector.length },
      });
    }
    return { stored: outcome === "stored" };
  });
}
