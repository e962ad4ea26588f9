import { withTenant } from "@3ngram/db";
import type { GetMemoriesInput } from "@3ngram/schema";
import { selectMemoriesByIds, type MemoryRow } from "../db/memories.js";
import type { Actor, MemoryDeps } from "./deps.js";

export interface GetMemoriesResult {
  memories: MemoryRow[];
  /** Unknown and other tenants' ids alike: the caller cannot tell them apart. */
  notFound: string[];
}

/** Batched read by id, superseded and archived rows included. Content bounds are applied at the edge mapping. */
export async function getMemories(deps: MemoryDeps, actor: Actor, input: GetMemoriesInput): Promise<GetMemoriesResult> {
  const ids = [...new Set(input.ids.map((id) => id.toLowerCase()))];
  const memories = await withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId, readOnly: true }, (db) =>
    selectMemoriesByIds(db, actor.tenantId, ids),
  );
  const found = new Set(memories.map((m) => m.id));
  return { memories, notFound: ids.filter((id) => !found.has(id)) };
}
