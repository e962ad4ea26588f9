/**
 * The changes-since reads behind briefing and handoff with `since` (ADR-0022). A change cursor is
 * the PostgreSQL snapshot of the read that issued it plus that read's clock. Every audit event
 * records the transaction that wrote it (memory_events.txid, migration 0009), so "changed after
 * the cursor" is exactly "written by a transaction that snapshot did not see": nothing committed
 * around the cursor is counted twice or missed, however transactions interleave.
 *
 * For each section the statement decides, per memory, whether it was in the section at the
 * cursor and whether it is now, from the memory's current row and its events after the cursor:
 *   - it existed then unless its create/import event came after;
 *   - it was live then if it is live now or it left after (supersede, archive, or an erase that
 *     archived it — nothing else ends a live memory, and nothing brings one back);
 *   - a commitment's status then is the `from` of its first status event after, else its status now;
 *   - overdue and staleCandidates also compare due and valid-from times with both clocks.
 * In now but not then is `new`; in then but not now is why it left. The same REPEATABLE READ
 * snapshot answers every section, so the counts agree with each other.
 */
import type { Queryable } from "@3ngram/db";
import type { ChangeCounts, ChangeKind, MemoryType } from "@3ngram/schema";
import {
  CONTENT_COLUMNS,
  LIVE,
  SELECTED,
  filterParams,
  type CommitmentLineRow,
  type MemoryLineRow,
  type SectionRows,
  type SectionRead,
  type SelectorFilter,
} from "./briefing.js";

/** Where a change cursor points: a snapshot (pg_snapshot text) and its transaction's clock (exact, UTC). */
export interface ChangePoint {
  snapshot: string;
  at: string;
}

/** This transaction's snapshot and clock: the point the next cursor is issued for. */
/** The database's secret for signing change cursors (hex), made by the migration that added them. */
export async function selectChangeCursorSecret(db: Queryable): Promise<string | undefined> {
  const { rows } = await db.query<{ secret: string }>("SELECT secret FROM change_cursor_keys WHERE id = 1");
  return rows[0]?.secret;
}

export async function selectChangePoint(db: Queryable): Promise<ChangePoint> {
  const { rows } = await db.query<ChangePoint>(
    `SELECT pg_current_snapshot()::text AS snapshot, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at`,
  );
  return rows[0]!;
}

/** Whether a cursor's point lies in this database's past, and how many days ago. */
export async function selectPointAge(db: Queryable, point: ChangePoint): Promise<{ inPast: boolean; ageDays: number }> {
  const { rows } = await db.query<{ inPast: boolean; ageDays: number }>(
    `SELECT pg_snapshot_xmax($1::pg_snapshot) <= pg_snapshot_xmax(pg_current_snapshot()) AND $2::timestamptz <= now() AS "inPast",
            extract(epoch FROM now() - $2::timestamptz)::float8 / 86400 AS "ageDays"`,
    [point.snapshot, point.at],
  );
  return rows[0]!;
}

/** What a line of a changes-since section adds: how it changed, and a superseded item's successor. */
export interface ChangeFields {
  change: ChangeKind;
  supersededBy: string | null;
}
type Changed<T> = T & ChangeFields;

export interface ChangedSection<T> extends SectionRows<Changed<T>> {
  changes: ChangeCounts;
}

/** The events that move a memory into or out of a section (not embedding or fact bookkeeping). */
const SECTION_EVENTS = `('create', 'import', 'supersede', 'archive', 'erase', 'resolve', 'unresolve', 'status_change')`;

/**
 * Per memory with section events after the cursor ($5, its snapshot): whether it was created
 * after, its first leaving event after, its status before its first status change after, and
 * when it last changed.
 */
const CHANGED_SINCE = `changed AS (
  SELECT e.memory_id,
         bool_or(e.event_kind IN ('create', 'import')) AS created,
         (array_agg(e.event_kind ORDER BY e.txid, e.id) FILTER (WHERE e.event_kind IN ('supersede', 'archive')
            OR (e.event_kind = 'erase' AND (e.payload ->> 'archived')::boolean)))[1] AS left_by,
         (array_agg(e.payload ->> 'from' ORDER BY e.txid, e.id) FILTER (WHERE e.event_kind IN ('resolve', 'unresolve', 'status_change')
            AND e.payload ? 'from'))[1] AS status_then,
         max(e.created_at) AS changed_at
    FROM memory_events e
   WHERE e.tenant_id = $1 AND e.event_kind IN ${SECTION_EVENTS}
     AND e.txid >= pg_snapshot_xmin($5::pg_snapshot) AND NOT pg_visible_in_snapshot(e.txid, $5::pg_snapshot)
   GROUP BY e.memory_id)`;

/** Memories joined to their events after the cursor and to their successor. */
const JOINS = `LEFT JOIN changed ch ON ch.memory_id = m.id
  LEFT JOIN memory_edges succ ON succ.tenant_id = m.tenant_id AND succ.to_id = m.id AND succ.edge_type IN ('supersedes', 'updates')`;

/** Live then: existed then, and is live now or left after the cursor (nothing else ends a live memory). */
const LIVE_THEN = `coalesce(NOT ch.created, true) AND ((${LIVE}) OR ch.left_by IS NOT NULL)`;

/**
 * Wraps a section's per-row state (`inner` yields in_now, in_then, live_now, left_by,
 * status_now, changed_at and the line's own columns) into its changes: the change of each row,
 * the exact total and counts by kind, the latest change first, at most $6 lines.
 */
function changedSelect(inner: string, lineColumns: string): string {
  return `WITH ${CHANGED_SINCE},
    state AS (${inner}),
    lines AS (
      SELECT s.*, CASE
          WHEN s.in_now AND NOT s.in_then THEN 'new'
          WHEN s.in_then AND NOT s.in_now THEN CASE
            WHEN NOT s.live_now THEN CASE s.left_by WHEN 'supersede' THEN 'superseded' WHEN 'archive' THEN 'archived' WHEN 'erase' THEN 'erased' END
            ELSE s.status_now END
        END AS change
        FROM state s)
    SELECT ${lineColumns}, l.change, l."supersededBy", count(*) OVER ()::int AS total,
           (SELECT jsonb_object_agg(k.change, k.n) FROM (SELECT change, count(*)::int AS n FROM lines WHERE change IS NOT NULL GROUP BY change) k) AS counts
      FROM lines l
     WHERE l.change IS NOT NULL
     ORDER BY l.changed_at DESC, l.id
     LIMIT $6`;
}

const NO_CHANGES: ChangeCounts = { new: 0, superseded: 0, resolved: 0, expired: 0, archived: 0, erased: 0 };

function changedSection<T>(rows: Array<Changed<T> & { total: number; counts: Partial<ChangeCounts> | null }>): ChangedSection<T> {
  return {
    count: rows[0]?.total ?? 0,
    changes: { ...NO_CHANGES, ...(rows[0]?.counts ?? {}) },
    rows: rows.map(({ total: _total, counts: _counts, ...row }) => row as unknown as Changed<T>),
  };
}

const CONTENT_LINE_COLUMNS = `, l."contentHead", l."contentLength"`;

/**
 * Commitments that entered or left the commitments section (or, with `overdueOnly`, the overdue
 * section) since the cursor. A commitment still live that left was resolved or expired.
 */
export async function selectChangedCommitmentSection(
  db: Queryable,
  tenantId: string,
  filter: SelectorFilter,
  options: SectionRead & { since: ChangePoint; overdueOnly: boolean },
): Promise<ChangedSection<CommitmentLineRow>> {
  // $7, the cursor's clock: due before it was overdue then; due before now() is overdue now.
  const overdue = options.overdueOnly;
  const inner = `
    SELECT c.id, c.memory_id AS "memoryId", m.topic, c.status, c.due_at AS "dueAt", c.owner,
           (c.due_at IS NOT NULL AND c.due_at < now()) AS overdue, m.scope, m.project,
           (${LIVE}) AS live_now, ch.left_by, succ.from_id AS "supersededBy",
           CASE WHEN c.status IN ('resolved', 'expired') THEN c.status END AS status_now,
           coalesce(ch.changed_at, ${overdue ? "c.due_at" : "NULL"}) AS changed_at,
           (${LIVE}) AND c.status IN ('open', 'waiting') ${overdue ? "AND c.due_at < now()" : ""} AS in_now,
           ${LIVE_THEN} AND coalesce(ch.status_then, c.status) IN ('open', 'waiting') ${overdue ? "AND c.due_at < $7::timestamptz" : ""} AS in_then
           ${options.withContent ? CONTENT_COLUMNS : ""}
      FROM commitments c
      JOIN memories m ON m.tenant_id = c.tenant_id AND m.id = c.memory_id
      ${JOINS}
     WHERE c.tenant_id = $1 AND ${SELECTED}
       AND (ch.memory_id IS NOT NULL ${overdue ? "OR (c.due_at >= $7::timestamptz AND c.due_at < now())" : ""})`;
  const columns = `l.id, l."memoryId", l.topic, l.status, l."dueAt", l.owner, l.overdue, l.scope, l.project${options.withContent ? CONTENT_LINE_COLUMNS : ""}`;
  const params = [...filterParams(tenantId, filter), options.since.snapshot, options.limit, ...(overdue ? [options.since.at] : [])];
  const { rows } = await db.query(changedSelect(inner, columns), params);
  return changedSection<CommitmentLineRow>(rows);
}

/**
 * A stale window of `days` (a parameter) as whole days of 24 hours, the days the full briefing
 * counts in JavaScript. make_interval(days => n) would count calendar days in the session's time
 * zone: an hour more or less across a change of summer time, so the two reads would disagree.
 */
export function staleWindow(days: string): string {
  return `make_interval(hours => 24 * ${days}::int)`;
}

/**
 * Memories of the given types that entered or left a memory section since the cursor. With
 * `staleAfterDays` the section is staleCandidates: a memory also enters it by growing older than
 * that between the cursor's clock and now.
 */
export async function selectChangedMemorySection(
  db: Queryable,
  tenantId: string,
  filter: SelectorFilter,
  options: SectionRead & { since: ChangePoint; types: readonly MemoryType[]; staleAfterDays: number | null },
): Promise<ChangedSection<MemoryLineRow>> {
  // $8, the cursor's clock, and $9, the stale window in days.
  const stale = options.staleAfterDays !== null;
  const oldBy = (clock: string) => `m.valid_from < ${clock} - ${staleWindow("$9")}`;
  const inner = `
    SELECT m.id, m.memory_type AS "memoryType", m.topic, m.scope, m.project, m.recorded_at AS "recordedAt",
           (${LIVE}) AS live_now, ch.left_by, succ.from_id AS "supersededBy", NULL::text AS status_now,
           coalesce(ch.changed_at, ${stale ? `m.valid_from + ${staleWindow("$9")}` : "NULL"}) AS changed_at,
           (${LIVE}) ${stale ? `AND ${oldBy("now()")}` : ""} AS in_now,
           ${LIVE_THEN} ${stale ? `AND ${oldBy("$8::timestamptz")}` : ""} AS in_then
           ${options.withContent ? CONTENT_COLUMNS : ""}
      FROM memories m
      ${JOINS}
     WHERE ${SELECTED} AND m.memory_type = ANY ($7::text[])
       AND (ch.memory_id IS NOT NULL ${stale ? `OR (NOT ${oldBy("$8::timestamptz")} AND ${oldBy("now()")})` : ""})`;
  const columns = `l.id, l."memoryType", l.topic, l.scope, l.project, l."recordedAt"${options.withContent ? CONTENT_LINE_COLUMNS : ""}`;
  const params = [
    ...filterParams(tenantId, filter),
    options.since.snapshot,
    options.limit,
    options.types,
    ...(stale ? [options.since.at, options.staleAfterDays] : []),
  ];
  const { rows } = await db.query(changedSelect(inner, columns), params);
  return changedSection<MemoryLineRow>(rows);
}
