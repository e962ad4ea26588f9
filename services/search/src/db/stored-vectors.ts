import { fromVectorBinary, type Queryable } from "@3ngram/db";
import { SqlParams } from "./eligibility.js";

/**
 * The reads that keep the in-process vector index (domain/vector-index.ts) equal to the stored
 * vectors: a first load in id order, and afterwards the memories whose events a snapshot did not
 * see. Every change to a memory's vector (written with it, embedded later, re-embedded with another
 * model, erased) appends a memory event in the same transaction, and every event records that
 * transaction (memory_events.txid, migration 0009), so "written by a transaction the snapshot did
 * not see" misses nothing committed around it, however transactions interleave.
 */

/** Which stored vectors an index holds: one tenant's, of one model and length. */
export interface VectorSet {
  tenantId: string;
  model: string;
  dimensions: number;
}

/** A memory's vector as the index holds it; null when it holds none for it now (erased, or another model's). */
interface StoredVector {
  id: string;
  vector: Float32Array | null;
}

/** The snapshot the next reads are measured from: this statement's. */
export async function selectSnapshot(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ snapshot: string }>("SELECT pg_current_snapshot()::text AS snapshot");
  return rows[0]!.snapshot;
}

/** One page of the set's vectors after `afterId` in id order (null: from the start). */
export async function selectVectorPage(db: Queryable, set: VectorSet, afterId: string | null, limit: number): Promise<{ id: string; vector: Float32Array }[]> {
  const { rows } = await db.query<{ id: string; sent: Buffer }>(
    `SELECT m.id, vector_send(m.embedding) AS sent FROM memories m
      WHERE m.tenant_id = $1 AND m.embedding_model = $2 AND m.embedding_dim = $3 AND m.erased_at IS NULL
        AND ($4::uuid IS NULL OR m.id > $4::uuid)
      ORDER BY m.id LIMIT $5`,
    [set.tenantId, set.model, set.dimensions, afterId, limit],
  );
  return rows.map((r) => ({ id: r.id, vector: fromVectorBinary(r.sent) }));
}

/** What a catch-up read: the memories changed since a snapshot, each with its vector now, and the snapshot they are current for. */
export interface VectorChanges {
  snapshot: string;
  changes: StoredVector[];
}

/** The row vectorChangesStatement answers (its column names are its own, so it can share a row with others). */
export interface VectorChangesRow {
  vectorSnapshot: string;
  changedIds: string[];
  changedVectors: (Buffer | null)[];
}

/**
 * One row: the memories with an event written by a transaction `since` did not see, each with its
 * vector now (null when erased or of another model), and this statement's snapshot, which the
 * index is current for once they are applied. A first relevance page reads it together with the
 * retrieval scope (selectScopeAndQueryTerms); the range on txid keeps it to an index scan.
 */
export function vectorChangesStatement(p: SqlParams, set: VectorSet, since: string): string {
  const tenant = p.add(set.tenantId);
  const snapshot = p.add(since);
  return `SELECT pg_current_snapshot()::text AS "vectorSnapshot",
            coalesce(array_agg(c.memory_id ORDER BY c.memory_id), '{}') AS "changedIds",
            coalesce(array_agg(CASE WHEN m.embedding_model = ${p.add(set.model)} AND m.embedding_dim = ${p.add(set.dimensions)} AND m.erased_at IS NULL
                                    THEN vector_send(m.embedding) END ORDER BY c.memory_id), '{}') AS "changedVectors"
       FROM (SELECT DISTINCT e.memory_id FROM memory_events e
              WHERE e.tenant_id = ${tenant} AND e.txid >= pg_snapshot_xmin(${snapshot}::pg_snapshot)
                AND NOT pg_visible_in_snapshot(e.txid, ${snapshot}::pg_snapshot)) c
       LEFT JOIN memories m ON m.tenant_id = ${tenant} AND m.id = c.memory_id`;
}

export function toVectorChanges(row: VectorChangesRow): VectorChanges {
  return {
    snapshot: row.vectorSnapshot,
    changes: row.changedIds.map((id, i) => {
      const sent = row.changedVectors[i] ?? null;
      return { id, vector: sent === null ? null : fromVectorBinary(sent) };
    }),
  };
}

/** The changes since `since` on their own (a catch-up outside a search's first statement). */
export async function selectVectorChanges(db: Queryable, set: VectorSet, since: string): Promise<VectorChanges> {
  const p = new SqlParams();
  const { rows } = await db.query<VectorChangesRow>(vectorChangesStatement(p, set, since), p.values);
  return toVectorChanges(rows[0]!);
}
