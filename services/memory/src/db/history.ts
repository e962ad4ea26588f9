import type { Queryable } from "@3ngram/db";
import type { ActorKind, EventKind } from "./memories.js";

export interface EventRow {
  id: string;
  memoryId: string;
  kind: EventKind;
  actor: ActorKind;
  createdAt: Date;
  /** Metadata only (ids, states, lengths); never content. */
  payload: Record<string, unknown> | null;
}

/** The newest `limit` audit events of the given memories, returned oldest first (newest last). */
export async function selectRecentEvents(db: Queryable, tenantId: string, memoryIds: readonly string[], limit: number): Promise<EventRow[]> {
  const { rows } = await db.query<EventRow>(
    `SELECT * FROM (
       SELECT id, memory_id AS "memoryId", event_kind AS kind, actor_kind AS actor, created_at AS "createdAt", payload
       FROM memory_events
       WHERE tenant_id = $1 AND memory_id = ANY ($2::uuid[])
       ORDER BY created_at DESC, id DESC
       LIMIT $3
     ) recent
     ORDER BY "createdAt", id`,
    [tenantId, memoryIds, limit],
  );
  return rows;
}
