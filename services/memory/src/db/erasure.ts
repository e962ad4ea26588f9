/**
 * SQL behind erasure. Choosing what to erase runs as the runtime role like any read; the erasing
 * itself is one call of the SECURITY DEFINER function erase_memories (migration 0009), because the
 * runtime role holds no UPDATE on content. Every statement names its tenant (RLS backs it up).
 */
import type { Queryable } from "@3ngram/db";
import type { ActorKind } from "./memories.js";

/** The memories a selector covers, as stored values (scope names already resolved through the registry). */
export interface ErasureFilter {
  scopes: readonly string[] | null;
  project: string | null;
  topic: string | null;
  subject: string | null;
}

/**
 * Memories not yet erased that match every set field of the filter, in id order, at most `limit`,
 * with the exact number of matches. `subject` matches memories that asserted a fact about it or
 * had a fact about it proposed from their text.
 */
export async function selectErasureTargets(db: Queryable, tenantId: string, filter: ErasureFilter, limit: number): Promise<{ ids: string[]; total: number }> {
  const { rows } = await db.query<{ id: string; total: number }>(
    `SELECT m.id, count(*) OVER ()::int AS total
       FROM memories m
      WHERE m.tenant_id = $1 AND m.erased_at IS NULL
        AND ($2::text[] IS NULL OR m.scope = ANY ($2::text[]))
        AND ($3::text IS NULL OR m.project = $3::text)
        AND ($4::text IS NULL OR m.topic = $4::text)
        AND ($5::text IS NULL
             OR EXISTS (SELECT 1 FROM facts f WHERE f.tenant_id = $1 AND f.memory_id = m.id AND f.subject = $5::text)
             OR EXISTS (SELECT 1 FROM fact_proposals p WHERE p.tenant_id = $1 AND p.memory_id = m.id AND p.subject = $5::text))
      ORDER BY m.id
      LIMIT $6`,
    [tenantId, filter.scopes, filter.project, filter.topic, filter.subject, limit],
  );
  return { ids: rows.map((r) => r.id), total: rows[0]?.total ?? 0 };
}

/** Which of the given ids exist in the tenant, and which of those are erased already (a dry run's answer). */
export async function selectErasureStates(db: Queryable, tenantId: string, ids: readonly string[]): Promise<{ live: string[]; erased: string[] }> {
  const { rows } = await db.query<{ id: string; erased: boolean }>(
    "SELECT id, erased_at IS NOT NULL AS erased FROM memories WHERE tenant_id = $1 AND id = ANY ($2::uuid[]) ORDER BY id",
    [tenantId, ids],
  );
  return { live: rows.filter((r) => !r.erased).map((r) => r.id), erased: rows.filter((r) => r.erased).map((r) => r.id) };
}

/** How many facts erasing these memories (and, with a subject, that subject's facts) would erase: the function's own rule. */
export async function countFactsToErase(db: Queryable, tenantId: string, memoryIds: readonly string[], subject: string | null): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM facts f
      WHERE f.tenant_id = $1 AND f.erased_at IS NULL
        AND (f.memory_id = ANY ($2::uuid[])
             OR f.id IN (SELECT p.fact_id FROM fact_proposals p WHERE p.tenant_id = $1 AND p.memory_id = ANY ($2::uuid[]) AND p.fact_id IS NOT NULL)
             OR ($3::text IS NOT NULL AND f.subject = $3::text))`,
    [tenantId, memoryIds, subject],
  );
  return rows[0]!.n;
}

export interface EraseCall {
  tenantId: string;
  erasureId: string;
  memoryIds: readonly string[];
  subject: string | null;
  actorKind: ActorKind;
  actorId: string | null;
  reason: string;
  reference: string | null;
}

export interface EraseCallResult {
  erased: string[];
  alreadyErased: string[];
  notFound: string[];
  facts: number;
  erasureId: string | null;
}

/** Runs the erase function in the caller's transaction (which must have this tenant bound). */
export async function callEraseMemories(db: Queryable, call: EraseCall): Promise<EraseCallResult> {
  const { rows } = await db.query<{ result: EraseCallResult }>(
    "SELECT erase_memories($1::uuid, $2::uuid[], $3::text, $4::uuid, $5::text, $6::uuid, $7::text, $8::text) AS result",
    [call.tenantId, call.memoryIds, call.subject, call.erasureId, call.actorKind, call.actorId, call.reason, call.reference],
  );
  return rows[0]!.result;
}
