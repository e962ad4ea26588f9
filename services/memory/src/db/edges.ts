import type { Queryable } from "@3ngram/db";
import type { ActorKind } from "./memories.js";

/** The edge kinds that make a memory's successor: the lineage history follows these only. */
export type LineageEdgeType = "supersedes" | "updates";
export type EdgeType = LineageEdgeType | "extends" | "derives";

/** The index that allows one successor per memory; a violation means another revise got there first. */
export const ONE_SUCCESSOR_INDEX = "memory_edges_one_successor_uq";

export interface EdgeRow {
  fromId: string;
  toId: string;
  edgeType: EdgeType;
  recordedAt: Date;
}

/** Appends an edge; from = successor (newer), to = predecessor (older). */
export async function insertEdge(
  db: Queryable,
  edge: {
    id: string;
    tenantId: string;
    fromId: string;
    toId: string;
    edgeType: EdgeType;
    createdBy: string | null;
    actor: ActorKind;
    proposalId?: string | null;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO memory_edges (id, tenant_id, from_id, to_id, edge_type, created_by, actor_kind, proposal_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [edge.id, edge.tenantId, edge.fromId, edge.toId, edge.edgeType, edge.createdBy, edge.actor, edge.proposalId ?? null],
  );
}

/** The direct successor of a memory (through a supersedes or updates edge), if any. */
export async function selectSuccessorId(db: Queryable, tenantId: string, memoryId: string): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>(
    "SELECT from_id AS id FROM memory_edges WHERE tenant_id = $1 AND to_id = $2 AND edge_type IN ('supersedes', 'updates')",
    [tenantId, memoryId],
  );
  return rows[0]?.id ?? null;
}

/** The predecessor a memory revises (its outgoing supersedes or updates edge), if any. */
export async function selectPredecessorEdge(db: Queryable, tenantId: string, memoryId: string): Promise<{ toId: string; edgeType: LineageEdgeType } | null> {
  const { rows } = await db.query<{ toId: string; edgeType: LineageEdgeType }>(
    "SELECT to_id AS \"toId\", edge_type AS \"edgeType\" FROM memory_edges WHERE tenant_id = $1 AND from_id = $2 AND edge_type IN ('supersedes', 'updates')",
    [tenantId, memoryId],
  );
  return rows[0] ?? null;
}

/**
 * The current head of the chain a memory belongs to: successors followed until one has none. A
 * memory has at most one successor (unique index), so the walk is a straight line; the depth cap
 * only guards against a corrupted graph.
 */
export async function selectHeadId(db: Queryable, tenantId: string, memoryId: string, maxDepth = 10_000): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `WITH RECURSIVE chain (id, depth) AS (
       SELECT $2::uuid, 0
       UNION ALL
       SELECT e.from_id, c.depth + 1
       FROM chain c
       JOIN memory_edges e ON e.tenant_id = $1 AND e.to_id = c.id AND e.edge_type IN ('supersedes', 'updates')
       WHERE c.depth < $3
     )
     SELECT id FROM chain ORDER BY depth DESC LIMIT 1`,
    [tenantId, memoryId, maxDepth],
  );
  return rows[0]?.id ?? memoryId;
}

/**
 * The memories connected to one through supersedes/updates edges, in either direction, nearest
 * first, at most `limit` of them (the memory itself included). Each memory has at most one
 * successor, so the connected lineage is a tree and every node is reached by exactly one path.
 */
export async function selectLineageIds(db: Queryable, tenantId: string, memoryId: string, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `WITH RECURSIVE walk (id, depth, path) AS (
       SELECT $2::uuid, 0, ARRAY[$2::uuid]
       UNION ALL
       SELECT CASE WHEN e.to_id = w.id THEN e.from_id ELSE e.to_id END, w.depth + 1,
              w.path || CASE WHEN e.to_id = w.id THEN e.from_id ELSE e.to_id END
       FROM walk w
       JOIN memory_edges e ON e.tenant_id = $1 AND e.edge_type IN ('supersedes', 'updates') AND (e.to_id = w.id OR e.from_id = w.id)
       WHERE w.depth < $3
         AND NOT (CASE WHEN e.to_id = w.id THEN e.from_id ELSE e.to_id END) = ANY (w.path)
     )
     SELECT id FROM walk GROUP BY id ORDER BY min(depth), id LIMIT $3`,
    [tenantId, memoryId, limit],
  );
  return rows.map((r) => r.id);
}

/** Supersedes/updates edges whose both ends are among `ids`, oldest first. */
export async function selectEdgesAmong(db: Queryable, tenantId: string, ids: readonly string[]): Promise<EdgeRow[]> {
  const { rows } = await db.query<EdgeRow>(
    `SELECT from_id AS "fromId", to_id AS "toId", edge_type AS "edgeType", recorded_at AS "recordedAt"
     FROM memory_edges
     WHERE tenant_id = $1 AND edge_type IN ('supersedes', 'updates') AND from_id = ANY ($2::uuid[]) AND to_id = ANY ($2::uuid[])
     ORDER BY recorded_at, id`,
    [tenantId, ids],
  );
  return rows;
}
