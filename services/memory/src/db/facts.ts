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

export const FACT_SELECT = `
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
    `SELECT id, valid_from AS "validFrom" FROM facts WHERE tenant_id = $1 AND subject = $2 AND predicate = $3 AND valid_to IS NULL`,
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
