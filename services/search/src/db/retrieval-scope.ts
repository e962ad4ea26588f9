import type { Queryable } from "@3ngram/db";
import type { RetrievalMode } from "@3ngram/schema";
import { queryTermsStatement, toQueryTerms, type QueryTerms, type QueryTermsRow, type Tokens } from "./candidates.js";
import { SqlParams } from "./eligibility.js";
import { changedSinceStatement, toChangedSince, type ChangedSince, type ChangedSinceRow } from "./stored-vectors.js";

export interface RetrievalScope {
  /** The tenant's retrieval default (no row: off). */
  mode: RetrievalMode;
  /** The scope the search is narrowed to: the caller's, else the policy default, else none. */
  scope: string | null;
  /** Every stored scope value matching `scope`: the registered name and its aliases, or just `scope` when unregistered. */
  names: string[] | null;
}

/**
 * Reads the retrieval policy and resolves the effective scope in one statement. An explicit scope
 * always wins; without one a `default` policy supplies its scope. A scope naming a registered scope
 * or one of its aliases matches rows stored under the name or any alias (rows written before an
 * alias or a rename existed); an unregistered scope matches itself.
 */
export async function selectRetrievalScope(db: Queryable, tenantId: string, requested: string | null): Promise<RetrievalScope> {
  const p = new SqlParams();
  const { rows } = await db.query<RetrievalScopeRow>(retrievalScopeStatement(p, tenantId, requested), p.values);
  return toRetrievalScope(rows[0]!);
}

/**
 * A first relevance page's one-row reads as one statement: the retrieval scope, the query's terms
 * with the tenant's text statistics (queryTermsStatement), and, when the in-process vector index
 * holds the tenant, the memories changed since its snapshot (changedSinceStatement). None depends
 * on another, and each read folded in saves a round trip: four protocol messages in standalone,
 * ~0.6 ms at 10k. All run after the transaction's role switch and tenant binding, as they did apart.
 */
export async function selectScopeAndQueryTerms(
  db: Queryable,
  args: {
    tenantId: string;
    requested: string | null;
    query: string;
    tokens: Tokens;
    /** When the in-process vector index holds the tenant, the memories changed since its snapshot (set in CATCH_UP_SNAPSHOT_SETTING) are read too. */
    changedSince?: boolean | undefined;
  },
): Promise<{ scope: RetrievalScope; terms: QueryTerms; changed: ChangedSince | null }> {
  const p = new SqlParams();
  const since = args.changedSince === true;
  // The column lists are disjoint (mode, scope, names; lexemes, stems, docs, lexemeTotal; vectorSnapshot, changedIds).
  const { rows } = await db.query<RetrievalScopeRow & QueryTermsRow & Partial<ChangedSinceRow>>(
    `SELECT rs.*, qt.*${since ? ", vc.*" : ""} FROM (${retrievalScopeStatement(p, args.tenantId, args.requested)}) rs
       CROSS JOIN (${queryTermsStatement(p, args.tenantId, args.query, args.tokens)}) qt${
         since
           ? `
       CROSS JOIN (${changedSinceStatement(p, args.tenantId)}) vc`
           : ""
       }`,
    p.values,
  );
  const row = rows[0]!;
  return {
    scope: toRetrievalScope(row),
    terms: toQueryTerms(row),
    changed: since ? toChangedSince(row as ChangedSinceRow) : null,
  };
}

interface RetrievalScopeRow {
  mode: RetrievalMode | null;
  scope: string | null;
  names: string[] | null;
}

/** One row: the policy's mode (null without a policy), the effective scope and its stored names. */
function retrievalScopeStatement(p: SqlParams, tenantId: string, requested: string | null): string {
  const tenant = p.add(tenantId);
  return `WITH pol AS (SELECT mode, default_scope FROM retrieval_policies WHERE tenant_id = ${tenant}),
          eff AS (SELECT coalesce(${p.add(requested)}::text, (SELECT default_scope FROM pol WHERE mode = 'default')) AS scope)
     SELECT (SELECT mode FROM pol) AS mode, eff.scope,
            (SELECT array_prepend(s.name, s.aliases) FROM scopes s
              WHERE s.tenant_id = ${tenant} AND (eff.scope = s.name OR eff.scope = ANY(s.aliases))
              ORDER BY (eff.scope = s.name) DESC LIMIT 1) AS names
       FROM eff`;
}

function toRetrievalScope(row: RetrievalScopeRow): RetrievalScope {
  return { mode: row.mode ?? "off", scope: row.scope, names: row.scope === null ? null : (row.names ?? [row.scope]) };
}

/** Registered scope names, for the message that refuses an unscoped search under `require`. */
export async function selectScopeNames(db: Queryable, tenantId: string, limit: number): Promise<{ names: string[]; total: number }> {
  const { rows } = await db.query<{ name: string; total: number }>(
    `SELECT name, (count(*) OVER ())::int AS total FROM scopes WHERE tenant_id = $1 ORDER BY name COLLATE "C" LIMIT $2`,
    [tenantId, limit],
  );
  return { names: rows.map((r) => r.name), total: rows[0]?.total ?? 0 };
}
