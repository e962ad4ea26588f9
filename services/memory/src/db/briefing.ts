import { contentHeadColumns, type Queryable } from "@3ngram/db";
import type { CommitmentStatus, MemoryType } from "@3ngram/schema";

/**
 * The section reads behind briefing and handoff. Each section is ONE bounded statement that also
 * returns the exact number of matches (count(*) OVER (), computed before the LIMIT), so a page and
 * its total can never disagree. Every statement covers only live memories (active and not
 * superseded) narrowed by the same selector predicate; the caller runs them in one REPEATABLE READ
 * transaction so the sections agree with each other too.
 */

/** The stored rows a selector covers. */
export interface SelectorFilter {
  /** Every stored scope value to match (a scope with its aliases), or null for any scope. */
  scopes: readonly string[] | null;
  /** Null for any project; otherwise only memories with exactly this project… */
  project: string | null;
  /** …plus, when set, those without any project. */
  includeUnscoped: boolean;
}

// $1 tenant, $2 scopes, $3 project, $4 includeUnscoped.
export const SELECTED = `m.tenant_id = $1
  AND ($2::text[] IS NULL OR m.scope = ANY($2::text[]))
  AND ($3::text IS NULL OR m.project = $3::text OR ($4::boolean AND m.project IS NULL))`;
/** Live = active and not superseded (a superseded memory's valid time is closed). */
export const LIVE = `m.status = 'active' AND m.valid_to IS NULL`;
const LIVE_AND_SELECTED = `${SELECTED} AND ${LIVE}`;

/** The head of the content and its full length in UTF-16 code units, after a section's own columns. */
export const CONTENT_COLUMNS = `, ${contentHeadColumns()}`;

/** Present when the section was read with content (handoff); absent for briefing. */
export interface ContentHead {
  contentHead?: string;
  contentLength?: number;
}

export interface CommitmentLineRow extends ContentHead {
  id: string;
  memoryId: string;
  topic: string;
  status: CommitmentStatus;
  dueAt: Date | null;
  owner: string | null;
  overdue: boolean;
  scope: string;
  project: string | null;
}

export interface MemoryLineRow extends ContentHead {
  id: string;
  memoryType: MemoryType;
  topic: string;
  scope: string;
  project: string | null;
  recordedAt: Date;
}

export interface SectionRows<T> {
  /** Exact number of matching rows. */
  count: number;
  rows: T[];
}

/** What every section read takes, whether it reads a section as it is now or what changed in it since a cursor. */
export interface SectionRead {
  limit: number;
  withContent: boolean;
}

export const filterParams = (tenantId: string, filter: SelectorFilter) => [tenantId, filter.scopes, filter.project, filter.includeUnscoped];

function section<T>(rows: Array<T & { total: number }>): SectionRows<T> {
  return { count: rows[0]?.total ?? 0, rows: rows.map(({ total: _total, ...row }) => row as unknown as T) };
}

/**
 * Open and waiting commitments of live memories, most pressing first (next surfacing, then due
 * date, nulls last). `overdueOnly` keeps those due before `now`, earliest due first: its own
 * statement, so an overdue commitment beyond the commitments section's limit is still counted.
 */
export async function selectCommitmentSection(
  db: Queryable,
  tenantId: string,
  filter: SelectorFilter,
  options: SectionRead & { now: Date; overdueOnly: boolean },
): Promise<SectionRows<CommitmentLineRow>> {
  const { rows } = await db.query<CommitmentLineRow & { total: number }>(
    `SELECT c.id, c.memory_id AS "memoryId", m.topic, c.status, c.due_at AS "dueAt", c.owner,
       (c.due_at IS NOT NULL AND c.due_at < $5::timestamptz) AS overdue, m.scope, m.project,
       count(*) OVER ()::int AS total ${options.withContent ? CONTENT_COLUMNS : ""}
     FROM commitments c
     JOIN memories m ON m.tenant_id = c.tenant_id AND m.id = c.memory_id
     WHERE c.tenant_id = $1 AND c.status IN ('open', 'waiting') AND ${LIVE_AND_SELECTED}
       ${options.overdueOnly ? "AND c.due_at < $5::timestamptz" : ""}
     ORDER BY ${options.overdueOnly ? "c.due_at ASC, c.id ASC" : "c.next_surfacing_at ASC NULLS LAST, c.due_at ASC NULLS LAST, c.id ASC"}
     LIMIT $6`,
    [...filterParams(tenantId, filter), options.now, options.limit],
  );
  return section(rows);
}

/**
 * Live memories of the given types. `newest` orders by valid time (when it became true, which a
 * write may set to the past) descending; `oldest` ascending. `validBefore` keeps only memories
 * valid since before that instant (stale candidates).
 */
export async function selectMemorySection(
  db: Queryable,
  tenantId: string,
  filter: SelectorFilter,
  options: SectionRead & { types: readonly MemoryType[]; order: "newest" | "oldest"; validBefore: Date | null },
): Promise<SectionRows<MemoryLineRow>> {
  const { rows } = await db.query<MemoryLineRow & { total: number }>(
    `SELECT m.id, m.memory_type AS "memoryType", m.topic, m.scope, m.project, m.recorded_at AS "recordedAt",
       count(*) OVER ()::int AS total ${options.withContent ? CONTENT_COLUMNS : ""}
     FROM memories m
     WHERE ${LIVE_AND_SELECTED} AND m.memory_type = ANY($5::text[])
       AND ($6::timestamptz IS NULL OR m.valid_from < $6::timestamptz)
     ORDER BY ${options.order === "newest" ? "m.valid_from DESC, m.id ASC" : "m.valid_from ASC, m.id ASC"}
     LIMIT $7`,
    [...filterParams(tenantId, filter), options.types, options.validBefore, options.limit],
  );
  return section(rows);
}
