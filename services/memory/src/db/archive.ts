/**
 * SQL behind bulk import and full-tenant export. Imported rows keep the historical times the
 * archive carries; every statement names its tenant explicitly (RLS backs it up).
 */
import type { Queryable } from "@3ngram/db";
import type { FactRow } from "./facts.js";
import { MEMORY_CONTENT_COLUMNS, memoryContentParams, type MemoryRow, type MemoryRowContent } from "./memories.js";
import type { CommitmentStatus, EdgeType, MemoryStatus, RetrievalMode } from "@3ngram/schema";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A key that looks like a uuid may also name a row of this tenant by id (re-importing one's own export). */
function keyAsId(key: string): string | null {
  return UUID.test(key) ? key : null;
}

/** The database clock: the instant every row of this transaction is recorded at by default. */
export async function transactionNow(db: Queryable): Promise<Date> {
  const { rows } = await db.query<{ now: Date }>("SELECT now() AS now");
  return rows[0]!.now;
}

/** Serialises imports of the same key in one tenant, so two concurrent runs cannot both create it. */
export async function lockImportKey(db: Queryable, tenantId: string, table: "memories" | "facts", key: string): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtextextended($1 || '/import/' || $2 || '/' || $3, 0))", [tenantId, table, key]);
}

/** The memory an archive key names in this tenant: one imported under that key, or (for a uuid key) that very id. */
export async function findMemoryByKey(db: Queryable, tenantId: string, key: string): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM memories WHERE tenant_id = $1 AND (import_key = $2 OR id = $3::uuid)
     ORDER BY (import_key = $2) DESC NULLS LAST LIMIT 1`,
    [tenantId, key, keyAsId(key)],
  );
  return rows[0]?.id ?? null;
}

export async function findFactByKey(db: Queryable, tenantId: string, key: string): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM facts WHERE tenant_id = $1 AND (import_key = $2 OR id = $3::uuid)
     ORDER BY (import_key = $2) DESC NULLS LAST LIMIT 1`,
    [tenantId, key, keyAsId(key)],
  );
  return rows[0]?.id ?? null;
}

export interface ImportedMemoryRow extends MemoryRowContent {
  importKey: string;
  status: MemoryStatus;
  /** Null: the transaction's time. */
  validFrom: Date | null;
  validTo: Date | null;
  recordedAt: Date | null;
  /** Null on a closed row: the transaction's time. */
  closedRecordedAt: Date | null;
  createdBy: string | null;
  /** Set for a memory that was erased where it was exported: it arrives erased. */
  erasedAt: Date | null;
}

/**
 * Inserts an imported memory with its historical times and no embedding. Returns null when a
 * live memory already holds the same content (only live rows are guarded: closed ones are history).
 */
export async function insertImportedMemory(db: Queryable, row: ImportedMemoryRow): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO memories (${MEMORY_CONTENT_COLUMNS}, import_key, status,
                           valid_from, valid_to, recorded_at, closed_recorded_at, created_by, erased_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
             coalesce($12::timestamptz, now()), $13::timestamptz, coalesce($14::timestamptz, now()),
             CASE WHEN $13::timestamptz IS NULL THEN NULL ELSE coalesce($15::timestamptz, now()) END, $16, $17::timestamptz)
     ON CONFLICT (tenant_id, content_hash) WHERE valid_to IS NULL DO NOTHING
     RETURNING id`,
    [...memoryContentParams(row), row.importKey, row.status, row.validFrom, row.validTo, row.recordedAt, row.closedRecordedAt, row.createdBy, row.erasedAt],
  );
  return rows[0]?.id ?? null;
}

/**
 * A commitment restored in the state the archive recorded. The state-machine trigger guards
 * updates only, so a terminal state inserts as is. Only a live, unresolved commitment is
 * scheduled to surface.
 */
export async function insertImportedCommitment(
  db: Queryable,
  c: {
    id: string;
    tenantId: string;
    memoryId: string;
    status: CommitmentStatus;
    owner: string | null;
    dueAt: Date | null;
    resolvedAt: Date | null;
    surfaces: boolean;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO commitments (id, tenant_id, memory_id, status, owner, due_at, next_surfacing_at, resolved_at)
     VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $8::boolean THEN $6::timestamptz END, $7)`,
    [c.id, c.tenantId, c.memoryId, c.status, c.owner, c.dueAt, c.resolvedAt, c.surfaces],
  );
}

/** The id of an identical edge, if one exists. */
export async function findEdge(db: Queryable, tenantId: string, fromId: string, toId: string, edgeType: EdgeType): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>("SELECT id FROM memory_edges WHERE tenant_id = $1 AND from_id = $2 AND to_id = $3 AND edge_type = $4", [
    tenantId,
    fromId,
    toId,
    edgeType,
  ]);
  return rows[0]?.id ?? null;
}

export async function insertImportedEdge(
  db: Queryable,
  e: { id: string; tenantId: string; fromId: string; toId: string; edgeType: EdgeType; createdBy: string | null; recordedAt: Date | null },
): Promise<void> {
  await db.query(
    `INSERT INTO memory_edges (id, tenant_id, from_id, to_id, edge_type, created_by, actor_kind, recorded_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'importer', coalesce($7::timestamptz, now()))`,
    [e.id, e.tenantId, e.fromId, e.toId, e.edgeType, e.createdBy, e.recordedAt],
  );
}

/** The open generation of subject + predicate, locked the same way assertFact locks it. */
export async function lockOpenFact(db: Queryable, tenantId: string, subject: string, predicate: string): Promise<{ id: string; validFrom: Date } | null> {
  await db.query("SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2 || '/' || $3, 0))", [tenantId, subject, predicate]);
  const { rows } = await db.query<{ id: string; validFrom: Date }>(
    `SELECT id, valid_from AS "validFrom" FROM facts
      WHERE tenant_id = $1 AND subject = $2 AND predicate = $3 AND valid_to IS NULL AND erased_at IS NULL`,
    [tenantId, subject, predicate],
  );
  return rows[0] ?? null;
}

/** Closes an open generation at `validTo`, stamping the closing time (the second clock). */
export async function closeFact(db: Queryable, tenantId: string, factId: string, validTo: Date): Promise<void> {
  await db.query("UPDATE facts SET valid_to = $3, closed_recorded_at = now() WHERE tenant_id = $1 AND id = $2", [tenantId, factId, validTo]);
}

export async function insertImportedFact(
  db: Queryable,
  f: Omit<FactRow, "recordedAt"> & {
    tenantId: string;
    importKey: string;
    /** Null: the transaction's time. */
    recordedAt: Date | null;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO facts (id, tenant_id, import_key, memory_id, subject, predicate, value, confidence, valid_from, valid_to, recorded_at, closed_recorded_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::timestamptz, coalesce($11::timestamptz, now()),
             CASE WHEN $10::timestamptz IS NULL THEN NULL ELSE coalesce($12::timestamptz, now()) END)`,
    [f.id, f.tenantId, f.importKey, f.memoryId, f.subject, f.predicate, f.value, f.confidence, f.validFrom, f.validTo, f.recordedAt, f.closedRecordedAt],
  );
}

// ---------------------------------------------------------------------------------------------
// Export. Every section is read in a fixed order with a keyset bound, so pages neither repeat nor
// skip rows and two exports of the same data are identical. Only rows recorded by the export's
// start instant (`until`) are included.

/** The database clock at microsecond precision, as text that casts back exactly. */
export async function exactNow(db: Queryable): Promise<string> {
  const { rows } = await db.query<{ now: string }>(`SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS now`);
  return rows[0]!.now;
}

export interface ExportScopeRow {
  name: string;
  aliases: string[];
  projects: string[];
}

export async function selectScopesAfter(db: Queryable, tenantId: string, after: string | null, limit: number): Promise<ExportScopeRow[]> {
  const { rows } = await db.query<ExportScopeRow>(
    `SELECT name, aliases, projects FROM scopes
     WHERE tenant_id = $1 AND ($2::text IS NULL OR name COLLATE "C" > $2::text COLLATE "C")
     ORDER BY name COLLATE "C" LIMIT $3`,
    [tenantId, after, limit],
  );
  return rows;
}

export async function selectPolicyForExport(db: Queryable, tenantId: string): Promise<{ mode: RetrievalMode; scope: string | null }> {
  const { rows } = await db.query<{ mode: RetrievalMode; scope: string | null }>(
    "SELECT mode, default_scope AS scope FROM retrieval_policies WHERE tenant_id = $1",
    [tenantId],
  );
  return rows[0] ?? { mode: "off", scope: null };
}

/** Whether a row the cursor points after belongs to this tenant (a foreign or unknown cursor is refused). */
export async function rowExists(db: Queryable, tenantId: string, table: "memories" | "memory_edges" | "facts", id: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM ${table} WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
  return rows.length > 0;
}

/** The next memories in recorded order with their content size, so a page can stop before it grows too big. */
export async function selectMemorySizesAfter(
  db: Queryable,
  tenantId: string,
  after: string | null,
  until: string,
  limit: number,
): Promise<Array<{ id: string; bytes: number }>> {
  const { rows } = await db.query<{ id: string; bytes: number }>(
    `SELECT m.id, octet_length(m.content) AS bytes FROM memories m
     WHERE m.tenant_id = $1 AND m.recorded_at <= $3::timestamptz
       AND ($2::uuid IS NULL OR (m.recorded_at, m.id) > (SELECT p.recorded_at, p.id FROM memories p WHERE p.tenant_id = $1 AND p.id = $2::uuid))
     ORDER BY m.recorded_at, m.id LIMIT $4`,
    [tenantId, after, until, limit],
  );
  return rows;
}

/** A memory as exported: the stored fields plus its key, closing clock and flattened commitment. */
export interface ExportMemoryRow extends Omit<MemoryRow, "embedded" | "supersededBy" | "commitment"> {
  key: string;
  closedRecordedAt: Date | null;
  commitmentStatus: CommitmentStatus | null;
  commitmentOwner: string | null;
  commitmentDueAt: Date | null;
  commitmentResolvedAt: Date | null;
}

/** Full rows for the given ids, in recorded order; the key is the import key a row came with, else its id. */
export async function selectMemoriesForExport(db: Queryable, tenantId: string, ids: readonly string[]): Promise<ExportMemoryRow[]> {
  const { rows } = await db.query<ExportMemoryRow>(
    `SELECT m.id, coalesce(m.import_key, m.id::text) AS key, m.memory_type AS "memoryType", m.topic, m.content, m.scope, m.project,
            m.tags, m.status, m.valid_from AS "validFrom", m.valid_to AS "validTo", m.recorded_at AS "recordedAt",
            m.closed_recorded_at AS "closedRecordedAt", m.erased_at AS "erasedAt",
            c.status AS "commitmentStatus", c.owner AS "commitmentOwner", c.due_at AS "commitmentDueAt", c.resolved_at AS "commitmentResolvedAt"
     FROM memories m
     LEFT JOIN commitments c ON c.tenant_id = m.tenant_id AND c.memory_id = m.id
     WHERE m.tenant_id = $1 AND m.id = ANY($2::uuid[])
     ORDER BY m.recorded_at, m.id`,
    [tenantId, ids],
  );
  return rows;
}

export interface ExportEdgeRow {
  id: string;
  from: string;
  to: string;
  edgeType: EdgeType;
  recordedAt: Date;
}

export async function selectEdgesAfter(db: Queryable, tenantId: string, after: string | null, until: string, limit: number): Promise<ExportEdgeRow[]> {
  const { rows } = await db.query<ExportEdgeRow>(
    `SELECT e.id, coalesce(mf.import_key, mf.id::text) AS "from", coalesce(mt.import_key, mt.id::text) AS "to",
            e.edge_type AS "edgeType", e.recorded_at AS "recordedAt"
     FROM memory_edges e
     JOIN memories mf ON mf.tenant_id = e.tenant_id AND mf.id = e.from_id
     JOIN memories mt ON mt.tenant_id = e.tenant_id AND mt.id = e.to_id
     WHERE e.tenant_id = $1 AND e.recorded_at <= $3::timestamptz
       AND ($2::uuid IS NULL OR (e.recorded_at, e.id) > (SELECT p.recorded_at, p.id FROM memory_edges p WHERE p.tenant_id = $1 AND p.id = $2::uuid))
     ORDER BY e.recorded_at, e.id LIMIT $4`,
    [tenantId, after, until, limit],
  );
  return rows;
}

/** A fact as exported: memory ids replaced by keys. */
export interface ExportFactRow extends Omit<FactRow, "memoryId"> {
  key: string;
  memoryKey: string | null;
}

export async function selectFactsAfter(db: Queryable, tenantId: string, after: string | null, until: string, limit: number): Promise<ExportFactRow[]> {
  const { rows } = await db.query<ExportFactRow>(
    `SELECT f.id, coalesce(f.import_key, f.id::text) AS key, CASE WHEN m.id IS NULL THEN NULL ELSE coalesce(m.import_key, m.id::text) END AS "memoryKey",
            f.subject, f.predicate, f.value, f.confidence, f.valid_from AS "validFrom", f.valid_to AS "validTo",
            f.recorded_at AS "recordedAt", f.closed_recorded_at AS "closedRecordedAt"
     FROM facts f
     LEFT JOIN memories m ON m.tenant_id = f.tenant_id AND m.id = f.memory_id
     WHERE f.tenant_id = $1 AND f.recorded_at <= $3::timestamptz AND f.erased_at IS NULL
       AND ($2::uuid IS NULL OR (f.recorded_at, f.id) > (SELECT p.recorded_at, p.id FROM facts p WHERE p.tenant_id = $1 AND p.id = $2::uuid))
     ORDER BY f.recorded_at, f.id LIMIT $4`,
    [tenantId, after, until, limit],
  );
  return rows;
}
