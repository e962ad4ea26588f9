import type { Queryable } from "@3ngram/db";
import { HIT_COLUMNS, SqlParams, eligibleWhere, sqlInteger, type Eligibility, type HitRow } from "./eligibility.js";

/**
 * The rows among `ids` that are still eligible: how a relevance cursor continues. Rows that became
 * ineligible since the pool was frozen (archived, or out of the filters' reach) are absent; the
 * caller restores the frozen order.
 */
export async function selectEligibleByIds(db: Queryable, eligibility: Eligibility, ids: readonly string[]): Promise<HitRow[]> {
  if (ids.length === 0) return [];
  const p = new SqlParams();
  const eligible = eligibleWhere(eligibility, p);
  const { rows } = await db.query<HitRow>(`SELECT ${HIT_COLUMNS()} FROM memories m WHERE m.id = ANY(${p.add(ids)}::uuid[]) AND ${eligible}`, p.values);
  return rows;
}

/** A chronological row also carries its exact (microsecond) recorded time, the keyset cursor's key. */
export interface ChronologicalRow extends HitRow {
  recordedKey: string;
}

/** Where a chronological walk stopped: the last row returned. */
export interface Keyset {
  /** Recorded time with microseconds, "YYYY-MM-DDTHH:MM:SS.ffffffZ". */
  recordedKey: string;
  id: string;
}

export const RECORDED_KEY_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/**
 * One page of the exhaustive listing: eligible rows (and, with a query, rows matching it as full
 * text), newest recorded first, ties by id, strictly after `after`. Reads limit + 1 rows so the
 * caller knows whether more follow. The order matches the (tenant_id, recorded_at DESC, id) index.
 */
export async function selectChronological(
  db: Queryable,
  params: { eligibility: Eligibility; query: string | null; after: Keyset | null; limit: number },
): Promise<ChronologicalRow[]> {
  const p = new SqlParams();
  const where = [eligibleWhere(params.eligibility, p)];
  if (params.query !== null) where.push(`m.search_tsv @@ websearch_to_tsquery('english', ${p.add(params.query)})`);
  if (params.after) {
    const key = p.add(params.after.recordedKey);
    where.push(`m.recorded_at <= ${key}::timestamptz AND (m.recorded_at < ${key}::timestamptz OR m.id > ${p.add(params.after.id)}::uuid)`);
  }
  // The LIMIT is written into the text (a checked integer), not bound, as in the candidate
  // statement (docs/adr/0031): bound, PostgreSQL kept a custom plan for every listing (0 generic
  // plans in 56), planning it again each time (~1 ms of Bind inside PGlite at 10k).
  const { rows } = await db.query<ChronologicalRow>(
    `SELECT ${HIT_COLUMNS()},
            to_char(m.recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "recordedKey"
       FROM memories m
      WHERE ${where.join("\n        AND ")}
      ORDER BY m.recorded_at DESC, m.id
      LIMIT ${sqlInteger(params.limit + 1)}`,
    p.values,
  );
  return rows;
}
