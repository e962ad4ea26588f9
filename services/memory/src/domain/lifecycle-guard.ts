import { AppError } from "@3ngram/errors";
import type { Queryable } from "@3ngram/db";
import { selectHeadId, selectSuccessorId } from "../db/edges.js";
import type { MemoryState } from "../db/lifecycle.js";

export function memoryNotFound(memoryId: string): AppError {
  return new AppError("not_found", `memory ${memoryId} not found`);
}

/**
 * Why a memory can no longer change state, or null while it is live (active, valid time open,
 * no successor). A superseded memory names the current head of its chain, so the caller can act
 * on that one instead. Call it after locking the row: the successor lookup is a fresh statement
 * and so sees a revise that committed while this transaction waited for the lock.
 */
export async function notLive(db: Queryable, tenantId: string, state: MemoryState): Promise<AppError | null> {
  const successor = await selectSuccessorId(db, tenantId, state.id);
  if (successor !== null) {
    const head = await selectHeadId(db, tenantId, successor);
    return supersededConflict(state.id, head);
  }
  if (state.status === "archived") return new AppError("conflict", `memory ${state.id} is archived`, { ids: { memory: state.id } });
  if (state.validTo !== null)
    return new AppError("conflict", `memory ${state.id} is no longer current (its valid time has ended)`, { ids: { memory: state.id } });
  return null;
}

export function supersededConflict(memoryId: string, headId: string): AppError {
  return new AppError("conflict", `memory ${memoryId} is already superseded; the current head is ${headId}`, { ids: { head: headId } });
}
