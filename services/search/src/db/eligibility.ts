import { contentHeadColumns } from "@3ngram/db";
import type { AsOf, MemoryStatus, MemoryType, SearchHit } from "@3ngram/schema";

/** A count or limit written into a statement's text: only ever a validated non-negative integer. */
export function sqlInteger(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`invalid SQL integer: ${n}`);
  return String(n);
}

/** Positional parameters for one statement: add() binds a value and answers its placeholder. */
export class SqlParams {
  readonly values: unknown[] = [];

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  /** Forgets the values added after the first `length`, so a statement can be built again from there. */
  truncate(length: number): void {
    this.values.length = length;
  }
}

/**
 * Which memories a search may return. One value of this type builds the one predicate every leg
 * (vector, full text, recency), the chronological listing and every cursor continuation share, so
 * no path can see a row another path would not.
 */
export interface Eligibility {
  tenantId: string;
  /** Empty: any type. */
  memoryTypes: readonly MemoryType[];
  /** Every stored scope value that matches the scope filter (name and aliases); null: any scope. */
  scopeNames: readonly string[] | null;
  /** Empty: any project (rows without a project included). */
  projects: readonly string[];
  /** null: any status. */
  status: MemoryStatus | null;
  /** Inclusive bounds on recorded time (ISO-8601 instants, as the public input gives them). */
  recordedAfter: string | null;
  recordedBefore: string | null;
  /** Bi-temporal point (the public input's asOf); null: now, as currently known (no valid-time narrowing). */
  asOf: AsOf | null;
}

/**
 * Instants on the wire carry milliseconds; stored times carry microseconds. Every comparison with a
 * caller's instant treats the stored time as cut to the millisecond (what the caller was shown), so
 * "recorded at or before the recordedAt a hit displayed" includes that hit:
 * cut(x) <= t  ⇔  x < t + 1 ms;   cut(x) > t  ⇔  x >= t + 1 ms;   cut(x) >= t  ⇔  x >= t.
 */
function nextMillisecond(t: string): string {
  return new Date(Date.parse(t) + 1).toISOString();
}

/**
 * The eligibility predicate over memories aliased `m`. Without asOf, rows must have the requested
 * status (the caller passes "active" as the default) and superseded rows stay in (they are
 * demoted by ranking, never filtered). With asOf:
 * - asKnownAt K: the row was recorded by K;
 * - validAt V: the row's validity began by V and had not ended by V as known at K (a closing
 *   write counts only when its closed_recorded_at is at or before K; without K, as known now).
 */
export function eligibleWhere(e: Eligibility, p: SqlParams, m = "m"): string {
  const parts = [`${m}.tenant_id = ${p.add(e.tenantId)}`];
  if (e.status !== null) parts.push(`${m}.status = ${p.add(e.status)}`);
  if (e.memoryTypes.length > 0) parts.push(`${m}.memory_type = ANY(${p.add(e.memoryTypes)}::text[])`);
  if (e.scopeNames !== null) parts.push(`${m}.scope = ANY(${p.add(e.scopeNames)}::text[])`);
  if (e.projects.length > 0) parts.push(`${m}.project = ANY(${p.add(e.projects)}::text[])`);
  if (e.recordedAfter) parts.push(`${m}.recorded_at >= ${p.add(e.recordedAfter)}::timestamptz`);
  if (e.recordedBefore) parts.push(`${m}.recorded_at < ${p.add(nextMillisecond(e.recordedBefore))}::timestamptz`);
  const known = e.asOf?.asKnownAt ? p.add(nextMillisecond(e.asOf.asKnownAt)) : null;
  if (known) parts.push(`${m}.recorded_at < ${known}::timestamptz`);
  if (e.asOf?.validAt) {
    const valid = p.add(nextMillisecond(e.asOf.validAt));
    const endUnknown = known ? ` OR coalesce(${m}.closed_recorded_at, ${m}.recorded_at) >= ${known}::timestamptz` : "";
    parts.push(`${m}.valid_from < ${valid}::timestamptz`);
    parts.push(`(${m}.valid_to IS NULL OR ${m}.valid_to >= ${valid}::timestamptz${endUnknown})`);
  }
  return parts.join("\n      AND ");
}

/**
 * Whether a later memory supersedes or updates row `m`, as visible at the asOf point: the edge
 * must have been recorded by asKnownAt, and with validAt the successor must already be valid then
 * (at validAt the predecessor was still the truth). Uses the partial unique index on
 * memory_edges (tenant_id, to_id) for supersedes/updates.
 */
export function supersededExpr(e: Eligibility, p: SqlParams, m = "m"): string {
  const known = e.asOf?.asKnownAt ? ` AND e.recorded_at < ${p.add(nextMillisecond(e.asOf.asKnownAt))}::timestamptz` : "";
  const valid = e.asOf?.validAt
    ? ` AND EXISTS (SELECT 1 FROM memories s WHERE s.tenant_id = e.tenant_id AND s.id = e.from_id AND s.valid_from < ${p.add(nextMillisecond(e.asOf.validAt))}::timestamptz)`
    : "";
  return `EXISTS (SELECT 1 FROM memory_edges e
      WHERE e.tenant_id = ${m}.tenant_id AND e.to_id = ${m}.id AND e.edge_type IN ('supersedes', 'updates')${known}${valid})`;
}

/**
 * The recorded time as the public answer prints it (Date.toISOString: UTC, milliseconds, the
 * microseconds cut), written by the database so no row's instant is parsed into a Date to be printed.
 */
const ISO_INSTANT = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/** Columns every hit needs: identity, placement, and the head of the content to cut an excerpt from. */
export const HIT_COLUMNS = (m = "m") => `${m}.id, ${m}.memory_type AS "memoryType", ${m}.topic,
      ${contentHeadColumns(m)},
      ${m}.scope, ${m}.project, to_char(${m}.recorded_at AT TIME ZONE 'UTC', ${ISO_INSTANT}) AS "recordedAt"`;

/**
 * What a hit is made from: the public hit's own fields, but for the excerpt (cut from the head of
 * the content, enough for a 600-character excerpt and to know whether it was cut) and the score.
 */
export type HitRow = Omit<SearchHit, "content" | "truncated" | "score"> & { contentHead: string };
