import type { Queryable } from "@3ngram/db";
import type { RetrievalMode } from "@3ngram/schema";

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
  const { rows } = await db.query<{ mode: RetrievalMode | null; scope: string | null; names: string[] | null }>(
    `WITH pol AS (SELECT mode, default_scope FROM retrieval_policies WHERE tenant_id = $1),
          eff AS (SELECT coalesce($2::text, (SELECT default_scope FROM pol WHERE mode = 'default')) AS scope)
     SELECT (SELECT mode FROM pol) AS mode, eff.scope,
            (SELECT array_prepend(s.name, s.aliases) FROM scopes s
              WHERE s.tenant_id = $1 AND (eff.scope = s.name OR eff.scope = ANY(s.aliases))
              ORDER BY (eff.scope = s.name) DESC LIMIT 1) AS names
       FROM eff`,
    [tenantId, requested],
  );
  const row = rows[0]!;
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
