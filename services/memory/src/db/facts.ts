import type { Queryable } from "@3ngram/db";

export interface FactRow {
  id: string;
  subject: string;
  predicate: string;
  value: string;
  confidence: number | null;
  validFrom: Date;
  validTo: Date | null;
  recordedAt: Date;
  /** When a later assertion closed this generation; null while it is open. */
  closedRecordedAt: Date | null;
  memoryId: string | null;
}

const FACT_SELECT = `
  f.id, f.subject, f.predicate, f.value, f.confidence, f.valid_from AS "validFrom", f.valid_to AS "validTo",
  f.recorded_at AS "recordedAt", f.closed_recorded_at AS "closedRecordedAt", f.memory_id AS "memoryId"`;

export interface NewFact {
  id: string;
  tenantId: string;
  memoryId: string | null;
  subject: string;
  predicate: string;
  value: string;
  confidence: number | null;
  /** Null means now (the transaction's time). */
  validFrom: Date | null;
  importKey?: string | null;
}

/**
 * Asserts a new generation of subject + predicate. The open generation, if any, is closed in the
 * same transaction: its valid_to becomes the new valid_from and its closing time is recorded, so
 * reads "as known at" any instant stay exact. A per-subject+predicate transaction lock serialises
 * concurrent assertions. Returns null when the new validFrom precedes the open generation's.
 */
export async function assertFact(db: Queryable, fact: NewFact): Promise<{ row: FactRow; closedId: string | null } | null> {
  await db.query("SELECT pg_advisory_xact_lock(hashtextextended($1 || '/' || $2 || '/' || $3, 0))", [fact.tenantId, fact.subject, fact.predicate]);
  const open = await db.query<{ id: string; validFrom: Date }>(
    `SELECT id, valid_from AS "validFrom" FROM facts
      WHERE tenant_id = $1 AND subject = $2 AND predicate = $3 AND valid_to IS NULL AND erased_at IS NULL`,
    [fact.tenantId, fact.subject, fact.predicate],
  );
  const current = open.rows[0];
  const { rows: nowRows } = await db.query<{ now: Date }>("SELECT now() AS now");
  const validFrom = fact.validFrom ?? nowRows[0]!.now;
  if (current && validFrom < current.validFrom) return null;
  if (current) {
    await db.query("UPDATE facts SET valid_to = $3, closed_recorded_at = now() WHERE tenant_id = $1 AND id = $2", [fact.tenantId, current.id, validFrom]);
  }
  const { rows } = await db.query<FactRow>(
    `INSERT INTO facts AS f (id, tenant_id, memory_id, subject, predicate, value, confidence, valid_from, import_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     RETURNING ${FACT_SELECT}`,
    [fact.id, fact.tenantId, fact.memoryId, fact.subject, fact.predicate, fact.value, fact.confidence, validFrom, fact.importKey ?? null],
  );
  return { row: rows[0]!, closedId: current?.id ?? null };
}

/** Narrowing shared by every fact read: exact subject and/or predicate, and a row bound. */
export interface FactFilter {
  tenantId: string;
  subject?: string | undefined;
  predicate?: string | undefined;
  limit: number;
}

/** The generations open right now (valid_to unset), grouped by subject and predicate, newest assertion first. */
export async function selectCurrentFacts(db: Queryable, filter: FactFilter): Promise<FactRow[]> {
  const { rows } = await db.query<FactRow>(
    `SELECT ${FACT_SELECT}
       FROM facts f
      WHERE f.tenant_id = $1 AND f.erased_at IS NULL
        AND f.valid_to IS NULL
        AND ($2::text IS NULL OR f.subject = $2)
        AND ($3::text IS NULL OR f.predicate = $3)
      ORDER BY f.subject, f.predicate, f.recorded_at DESC, f.id
      LIMIT $4`,
    [filter.tenantId, filter.subject ?? null, filter.predicate ?? null, filter.limit],
  );
  return rows;
}

/**
 * The facts valid at `validAt` according to what was recorded by `asKnownAt`. Either may be null:
 * the known instant defaults to now, the valid instant to the known instant. A row was known when
 * it was recorded by the known instant; its end of validity was known only when it was closed by
 * then, so a row closed later is treated (and returned) as open, exactly as a read at that instant
 * saw it.
 *
 * Recorded and closing times carry microseconds; a caller's instant carries milliseconds, and is
 * often one an answer showed (a recordedAt, cut to the millisecond). So a caller's asKnownAt covers
 * every stored time that reads as it, up to 999 microseconds past it, the rule search's asOf
 * follows (services/search/src/db/eligibility.ts). Valid times are written at millisecond precision.
 */
export async function selectFactsAsOf(db: Queryable, filter: FactFilter & { validAt: Date | null; asKnownAt: Date | null }): Promise<FactRow[]> {
  const { rows } = await db.query<FactRow>(
    `WITH point AS (
            SELECT coalesce($4::timestamptz + interval '999 microseconds', now()) AS known_through,
                   coalesce($5::timestamptz, $4::timestamptz, now()) AS valid
          ),
          seen AS (
            SELECT f.*,
                   CASE WHEN f.closed_recorded_at <= p.known_through THEN f.valid_to END AS known_valid_to,
                   CASE WHEN f.closed_recorded_at <= p.known_through THEN f.closed_recorded_at END AS known_closed_at,
                   p.valid AS point_valid
              FROM facts f CROSS JOIN point p
             WHERE f.tenant_id = $1 AND f.erased_at IS NULL
               AND ($2::text IS NULL OR f.subject = $2)
               AND ($3::text IS NULL OR f.predicate = $3)
               AND f.recorded_at <= p.known_through
               AND f.valid_from <= p.valid
          )
     SELECT s.id, s.subject, s.predicate, s.value, s.confidence, s.valid_from AS "validFrom", s.known_valid_to AS "validTo",
            s.recorded_at AS "recordedAt", s.known_closed_at AS "closedRecordedAt", s.memory_id AS "memoryId"
       FROM seen s
      WHERE s.known_valid_to IS NULL OR s.known_valid_to > s.point_valid
      ORDER BY s.subject, s.predicate, s.recorded_at DESC, s.id
      LIMIT $6`,
    [filter.tenantId, filter.subject ?? null, filter.predicate ?? null, filter.asKnownAt, filter.validAt, filter.limit],
  );
  return rows;
}

/**
 * Every generation, as known now, whose validity overlaps the half-open window [from, to); a
 * missing end leaves that side unbounded. Oldest first.
 */
export async function selectFactsInRange(db: Queryable, filter: FactFilter & { from: Date | null; to: Date | null }): Promise<FactRow[]> {
  const { rows } = await db.query<FactRow>(
    `SELECT ${FACT_SELECT}
       FROM facts f
      WHERE f.tenant_id = $1 AND f.erased_at IS NULL
        AND ($2::text IS NULL OR f.subject = $2)
        AND ($3::text IS NULL OR f.predicate = $3)
        AND ($4::timestamptz IS NULL OR f.valid_to IS NULL OR f.valid_to > $4)
        AND ($5::timestamptz IS NULL OR f.valid_from < $5)
      ORDER BY f.valid_from, f.recorded_at, f.id
      LIMIT $6`,
    [filter.tenantId, filter.subject ?? null, filter.predicate ?? null, filter.from, filter.to, filter.limit],
  );
  return rows;
}

/** The facts written in the same transaction as a memory (same recorded_at), in the order they were given. */
export async function selectFactsWrittenWith(db: Queryable, tenantId: string, memoryId: string): Promise<FactRow[]> {
  const { rows } = await db.query<FactRow>(
    `SELECT ${FACT_SELECT} FROM facts f JOIN memories m ON m.tenant_id = f.tenant_id AND m.id = f.memory_id
      WHERE f.tenant_id = $1 AND f.memory_id = $2 AND f.recorded_at = m.recorded_at
      ORDER BY f.id`,
    [tenantId, memoryId],
  );
  return rows;
}
