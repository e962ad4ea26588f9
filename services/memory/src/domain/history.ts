import { withTenant } from "@3ngram/db";
import { selectEdgesAmong, selectLineageIds, type EdgeRow } from "../db/edges.js";
import { selectRecentEvents, type EventRow } from "../db/history.js";
import { selectMemoriesByIds, type MemoryRow } from "../db/memories.js";
import type { Actor, MemoryDeps } from "./deps.js";
import { memoryNotFound } from "./lifecycle-guard.js";

/** At most this many memories of a lineage, nearest to the asked-for one first. */
const HISTORY_MAX_NODES = 25;
/** At most this many audit events, the newest ones. */
const HISTORY_MAX_EVENTS = 50;

type LifecycleState = "current" | "superseded" | "archived";

export interface HistoryResult {
  memoryId: string;
  lifecycleState: LifecycleState;
  /** Oldest first; the chain's current head comes last. */
  lineage: MemoryRow[];
  edges: EdgeRow[];
  /** Oldest first, newest last. */
  events: EventRow[];
}

/**
 * A memory's lineage (the memories linked to it by supersedes/updates edges, both ways), those
 * edges, and the audit events of the lineage, each bounded. Unknown and other tenants' ids answer
 * not_found alike.
 */
export async function getHistory(deps: MemoryDeps, actor: Actor, input: { memoryId: string }): Promise<HistoryResult> {
  const memoryId = input.memoryId.toLowerCase();
  return withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId, readOnly: true }, async (db) => {
    const ids = await selectLineageIds(db, actor.tenantId, memoryId, HISTORY_MAX_NODES);
    const lineage = (await selectMemoriesByIds(db, actor.tenantId, ids)).sort(
      (a, b) => a.recordedAt.getTime() - b.recordedAt.getTime() || a.id.localeCompare(b.id),
    );
    const self = lineage.find((m) => m.id === memoryId);
    if (self === undefined) throw memoryNotFound(memoryId);
    const found = lineage.map((m) => m.id);
    const edges = await selectEdgesAmong(db, actor.tenantId, found);
    const events = await selectRecentEvents(db, actor.tenantId, found, HISTORY_MAX_EVENTS);
    return { memoryId, lifecycleState: lifecycleStateOf(self), lineage, edges, events };
  });
}

function lifecycleStateOf(memory: MemoryRow): LifecycleState {
  if (memory.status === "archived") return "archived";
  if (memory.supersededBy !== null || memory.validTo !== null) return "superseded";
  return "current";
}
