import type { Queryable, VectorParam } from "@3ngram/db";
import type { CommitmentStatus, MemoryStatus, MemoryType } from "@3ngram/schema";

export interface CommitmentRow {
  id: string;
  status: CommitmentStatus;
  owner: string | null;
  dueAt: Date | null;
  resolvedAt: Date | null;
}

/** A memory row as the service reads it (embedding omitted; only whether one is stored). */
export interface MemoryRow {
  id: string;
  memoryType: MemoryType;
  topic: string;
  content: string;
  scope: string;
  project: string | null;
  tags: string[];
  status: MemoryStatus;
  validFrom: Date;
  validTo: Date | null;
  recordedAt: Date;
  embedded: boolean;
  /** The successor's id once a supersedes/updates edge points at this memory. */
  supersededBy: string | null;
  commitment: CommitmentRow | null;
  /** When it was erased (topic and content then hold the marker); null otherwise. */
  erasedAt: Date | null;
}

/**
 * Every read of memories goes through this projection, so each caller sees the successor and the
 * commitment the same way. Use as `SELECT ${MEMORY_SELECT} FROM ${MEMORY_FROM} WHERE m.tenant_id = …`.
 */
export const MEMORY_SELECT = `
  m.id, m.memory_type AS "memoryType", m.topic, m.content, m.scope, m.project, m.tags, m.status,
  m.valid_from AS "validFrom", m.valid_to AS "validTo", m.recorded_at AS "recordedAt",
  (m.embedding IS NOT NULL) AS embedded,
  succ.from_id AS "supersededBy", m.erased_at AS "erasedAt",
  CASE WHEN c.id IS NULL THEN NULL ELSE json_build_object(
    'id', c.id, 'status', c.status, 'owner', c.owner, 'dueAt', c.due_at, 'resolvedAt', c.resolved_at) END AS commitment`;
export const MEMORY_FROM = `memories m
  LEFT JOIN memory_edges succ ON succ.tenant_id = m.tenant_id AND succ.to_id = m.id AND succ.edge_type IN ('supersedes', 'updates')
  LEFT JOIN commitments c ON c.tenant_id = m.tenant_id AND c.memory_id = m.id`;

interface RawMemoryRow extends Omit<MemoryRow, "commitment"> {
  commitment: { id: string; status: CommitmentStatus; owner: string | null; dueAt: string | null; resolvedAt: string | null } | null;
}

/** json_build_object hands timestamps back as text; turn them into Dates like the other columns. */
export function toMemoryRow(raw: RawMemoryRow): MemoryRow {
  const c = raw.commitment;
  return {
    ...raw,
    commitment: c
      ? { id: c.id, status: c.status, owner: c.owner, dueAt: c.dueAt ? new Date(c.dueAt) : null, resolvedAt: c.resolvedAt ? new Date(c.resolvedAt) : null }
      : null,
  };
}

/** Reads memories by id with their successor and commitment. */
export async function selectMemoriesByIds(db: Queryable, tenantId: string, ids: readonly string[]): Promise<MemoryRow[]> {
  const { rows } = await db.query<RawMemoryRow>(
    `SELECT ${MEMORY_SELECT} FROM ${MEMORY_FROM} WHERE m.tenant_id = $1 AND m.id = ANY($2::uuid[]) ORDER BY m.recorded_at DESC, m.id`,
    [tenantId, ids],
  );
  return rows.map(toMemoryRow);
}

/** What every new memory row holds, however it arrives (written by a caller or imported). */
export interface MemoryRowContent {
  id: string;
  tenantId: string;
  memoryType: MemoryType;
  topic: string;
  content: string;
  contentHash: string;
  scope: string;
  project: string | null;
  tags: string[];
}

/** The columns MemoryRowContent fills, in the order memoryContentParams gives their values ($1 to $9). */
export const MEMORY_CONTENT_COLUMNS = "id, tenant_id, memory_type, topic, content, content_hash, scope, project, tags";

export function memoryContentParams(row: MemoryRowContent): unknown[] {
  return [row.id, row.tenantId, row.memoryType, row.topic, row.content, row.contentHash, row.scope, row.project, row.tags];
}

export interface NewMemoryRow extends MemoryRowContent {
  createdBy: string | null;
  embedding: VectorParam | null;
  /** When what it records became true, as the caller said; null: the transaction's time. Recorded time is always the transaction's. */
  validFrom: Date | null;
}

/**
 * Inserts unless a live memory with the same content exists; answers whether it did. Nothing is
 * read back: the writer already holds every field its answer shows, and the content can be long.
 */
export async function insertMemory(db: Queryable, row: NewMemoryRow): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO memories (${MEMORY_CONTENT_COLUMNS}, created_by, embedding, embedding_model, embedding_dim, valid_from)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::vector, $12, $13, coalesce($14::timestamptz, now()))
     ON CONFLICT (tenant_id, content_hash) WHERE valid_to IS NULL DO NOTHING`,
    [...memoryContentParams(row), row.createdBy, row.embedding?.binary ?? null, row.embedding?.model ?? null, row.embedding?.dimensions ?? null, row.validFrom],
  );
  return rowCount === 1;
}

/** The live memory holding this exact content, if any. */
export async function findLiveByContentHash(db: Queryable, tenantId: string, contentHash: string): Promise<string | null> {
  const { rows } = await db.query<{ id: string }>("SELECT id FROM memories WHERE tenant_id = $1 AND content_hash = $2 AND valid_to IS NULL", [
    tenantId,
    contentHash,
  ]);
  return rows[0]?.id ?? null;
}

/**
 * Stores an embedding unless one from the same model is already there. The model is checked on
 * the row being updated, not the CTE's read: a store that waited on another's row lock then sees
 * the vector that one stored (READ COMMITTED re-checks the updated row only). Returns:
 * "stored", "unchanged" (same model already stored, or the memory was erased: it never takes a
 * vector again), or "missing" (no such memory for this tenant).
 */
export async function updateEmbedding(db: Queryable, tenantId: string, memoryId: string, embedding: VectorParam): Promise<"stored" | "unchanged" | "missing"> {
  const { rows } = await db.query<{ stored: boolean }>(
    `WITH target AS (SELECT id, embedding_model FROM memories WHERE tenant_id = $1 AND id = $2),
          changed AS (
            UPDATE memories m SET embedding = $3::vector, embedding_model = $4, embedding_dim = $5
            FROM target t
            WHERE m.tenant_id = $1 AND m.id = t.id AND m.embedding_model IS DISTINCT FROM $4 AND m.erased_at IS NULL
            RETURNING m.id)
     SELECT EXISTS (SELECT 1 FROM changed) AS stored FROM target`,
    [tenantId, memoryId, embedding.binary, embedding.model, embedding.dimensions],
  );
  const row = rows[0];
  if (!row) return "missing";
  return row.stored ? "stored" : "unchanged";
}

export type EventKind =
  "create" | "revise" | "supersede" | "resolve" | "unresolve" | "status_change" | "archive" | "import" | "embed_failed" | "embed_done" | "fact" | "erase";
/**
 * Who an audit event says acted: the surface a call came through (user_mcp, user_api), the
 * consolidator (worker), an import, the service itself (system), or the command line (operator).
 */
export const ACTOR_KINDS = ["user_mcp", "user_api", "worker", "importer", "system", "operator"] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

/** Appends an audit event. The payload holds metadata only, never content. */
export async function insertEvent(
  db: Queryable,
  event: { id: string; tenantId: string; memoryId: string; kind: EventKind; actor: ActorKind; payload?: Record<string, unknown> },
): Promise<void> {
  await db.query("INSERT INTO memory_events (id, tenant_id, memory_id, event_kind, actor_kind, payload) VALUES ($1, $2, $3, $4, $5, $6)", [
    event.id,
    event.tenantId,
    event.memoryId,
    event.kind,
    event.actor,
    event.payload ?? null,
  ]);
}
