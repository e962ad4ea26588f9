import { withTenant } from "@3ngram/db";
import type { ListMemoriesInput } from "@3ngram/schema";
import { selectMemoryPage } from "../db/listing.js";
import type { MemoryRow } from "../db/memories.js";
import { resolveReadScopes } from "../db/scopes.js";
import type { Actor, MemoryDeps } from "./deps.js";

export interface ListMemoriesResult {
  memories: MemoryRow[];
  /** Exact number of memories matching the filters, across all pages. */
  total: number;
}

/**
 * A bounded, filtered page of memories, newest first. By default only live memories (active and
 * not superseded); status archived lists archived ones. A scope filter naming a registered scope or
 * one of its aliases matches memories stored under the name or any alias.
 */
export async function listMemories(deps: MemoryDeps, actor: Actor, input: ListMemoriesInput): Promise<ListMemoriesResult> {
  const memoryTypes = input.memoryTypes ?? (input.type ? [input.type] : []);
  return withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId, readOnly: true }, async (db) => {
    const scopes = input.scope === undefined ? null : await resolveReadScopes(db, actor.tenantId, input.scope);
    return selectMemoryPage(
      db,
      actor.tenantId,
      {
        memoryTypes,
        scopes,
        projects: input.project ?? [],
        status: input.status ?? "active",
        recordedAfter: input.recordedAfter ? new Date(input.recordedAfter) : null,
        recordedBefore: input.recordedBefore ? new Date(input.recordedBefore) : null,
      },
      { limit: input.limit, offset: input.offset },
    );
  });
}
