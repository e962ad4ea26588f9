import { fromVectorBinary, type Queryable } from "@3ngram/db";
import { SqlParams } from "./eligibility.js";

/**
 * The reads that keep the in-process vector index (in-process/vector-index.ts) equal to the stored
 * vectors: a first load in id order, and afterwards the memories whose events a snapshot did not
 * see, with their vectors read only when there are any. Every change to a memory's vector (written with it, embedded later, re-embedded with another
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
export interface StoredVector {
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

/** What a catch-up read first: the memories changed since a snapshot, and the snapshot it read them at. */
export interface ChangedSince {
  snapshot: string;
  changedIds: string[];
}

/** The row changedSinceStatement answers (its column names are its own, so it can share a row with others). */
export interface ChangedSinceRow {
  vectorSnapshot: string;
  changedIds: string[];
}

/**
 * The transaction-local setting a search's catch-up snapshot travels in: set in the transaction's
 * opening batch (withTenant's settings), read by changedSinceStatement. Bound as a parameter
 * instead, the snapshot made PostgreSQL plan the whole first statement afresh on every search
 * (custom plans: +0.6 ms per search inside PGlite at 10k, against +0.01 ms this way, where the
 * statement keeps its generic plan).
 */
export const CATCH_UP_SNAPSHOT_SETTING = "threengram.vector_snapshot";

/**
 * One row: the memories with an event written by a transaction the snapshot in
 * CATCH_UP_SNAPSHOT_SETTING did not see, and this statement's snapshot, which the index is current
 * for once their vectors are applied. A first relevance page reads it together with the retrieval
 * scope (selectScopeAndQueryTerms). The txid range (an event the current snapshot sees was written
 * below its xmax) keeps it to an index range scan.
 */
export function changedSinceStatement(p: SqlParams, tenantId: string): string {
  const snapshot = `current_setting('${CATCH_UP_SNAPSHOT_SETTING}')::pg_snapshot`;
  return `SELECT pg_current_snapshot()::text AS "vectorSnapshot",
            ARRAY(SELECT DISTINCT e.memory_id FROM memory_events e
                   WHERE e.tenant_id = ${p.add(tenantId)}
                     AND e.txid >= pg_snapshot_xmin(${snapshot}) AND e.txid < pg_snapshot_xmax(pg_current_snapshot())
                     AND NOT pg_visible_in_snapshot(e.txid, ${snapshot})) AS "changedIds"`;
}

export function toChangedSince(row: ChangedSinceRow): ChangedSince {
  return { snapshot: row.vectorSnapshot, changedIds: row.changedIds };
}

/** The changes since `since` on their own (a catch-up outside a search's first statement), the setting made here. */
export async function selectChangedSince(db: Queryable, tenantId: string, since: string): Promise<ChangedSince> {
  await db.query("SELECT set_config($1, $2, true)", [CATCH_UP_SNAPSHOT_SETTING, since]);
  const p = new SqlParams();
  const { rows } = await db.query<ChangedSinceRow>(changedSinceStatement(p, tenantId), p.values);
  return toChangedSince(rows[0]!);
}

/** The given memories' vectors of the set now: null for one erased, of another model, or gone. */
export async function selectVectorsOf(db: Queryable, set: VectorSet, ids: readonly string[]): Promise<StoredVector[]> {
  const { rows } = await db.query<{ id: string; sent: Buffer | null }>(
    `SELECT n.id, CASE WHEN m.embedding_model = $2 AND m.embedding_dim = $3 AND m.erased_at IS NULL THEN vector_send(m.embedding) END AS sent
       FROM unnest($4::uuid[]) n(id) LEFT JOIN memories m ON m.tenant_id = $1 AND m.id = n.id`,
    [set.tenantId, set.model, set.dimensions, ids],
  );
  return rows.map((r) => ({ id: r.id, vector: r.sent === null ? null : fromVectorBinary(r.sent) }));
}
