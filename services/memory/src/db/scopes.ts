import type { Queryable } from "@3ngram/db";
import type { RetrievalMode } from "@3ngram/schema";

/**
 * The canonical scope a write lands in: an explicit scope is replaced by the registry name it is
 * an alias of (or kept as given when the registry does not know it); without a scope, a project
 * mapped to a scope decides; otherwise the default.
 */
export async function resolveWriteScope(
  db: Queryable,
  tenantId: string,
  requested: { scope: string | undefined; project: string | undefined },
  defaultScope: string,
): Promise<string> {
  if (requested.scope !== undefined) {
    const { rows } = await db.query<{ name: string }>(
      "SELECT name FROM scopes WHERE tenant_id = $1 AND ($2 = name OR $2 = ANY(aliases)) ORDER BY ($2 = name) DESC LIMIT 1",
      [tenantId, requested.scope],
    );
    return rows[0]?.name ?? requested.scope;
  }
  if (requested.project !== undefined) {
    const { rows } = await db.query<{ name: string }>("SELECT name FROM scopes WHERE tenant_id = $1 AND $2 = ANY(projects) ORDER BY name LIMIT 1", [
      tenantId,
      requested.project,
    ]);
    if (rows[0]) return rows[0].name;
  }
  return defaultScope;
}

/**
 * Every stored scope value a read filter naming `scope` must match: the canonical name and all its
 * aliases when the registry knows `scope` (by name or alias), so memories written before an alias
 * or a rename existed stay reachable; otherwise just `scope` itself.
 */
export async function resolveReadScopes(db: Queryable, tenantId: string, scope: string): Promise<string[]> {
  const { rows } = await db.query<{ names: string[] }>(
    `SELECT array_prepend(name, aliases) AS names FROM scopes
     WHERE tenant_id = $1 AND ($2 = name OR $2 = ANY(aliases)) ORDER BY ($2 = name) DESC LIMIT 1`,
    [tenantId, scope],
  );
  return rows[0]?.names ?? [scope];
}

export interface ScopeRow {
  id: string;
  name: string;
  aliases: string[];
  projects: string[];
  createdAt: Date;
}

export interface RetrievalPolicyRow {
  mode: RetrievalMode;
  scope: string | null;
}

const SCOPE_COLUMNS = `id, name, aliases, projects, created_at AS "createdAt"`;

/**
 * Serialises registry writes within one tenant for the rest of the transaction. Name and alias
 * uniqueness spans two columns (and array elements), which no unique index can express, so every
 * check-then-write runs under this lock.
 */
export async function lockScopeRegistry(db: Queryable, tenantId: string): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtextextended('scopes/' || $1, 0))", [tenantId]);
}

export async function selectScopes(db: Queryable, tenantId: string): Promise<ScopeRow[]> {
  const { rows } = await db.query<ScopeRow>(`SELECT ${SCOPE_COLUMNS} FROM scopes WHERE tenant_id = $1 ORDER BY name COLLATE "C"`, [tenantId]);
  return rows;
}

/** The scope registered under exactly this name (not an alias). */
export async function selectScopeByName(db: Queryable, tenantId: string, name: string): Promise<ScopeRow | null> {
  const { rows } = await db.query<ScopeRow>(`SELECT ${SCOPE_COLUMNS} FROM scopes WHERE tenant_id = $1 AND name = $2`, [tenantId, name]);
  return rows[0] ?? null;
}

/** The scope known by this name or alias. */
export async function selectScopeByNameOrAlias(db: Queryable, tenantId: string, nameOrAlias: string): Promise<ScopeRow | null> {
  const { rows } = await db.query<ScopeRow>(
    `SELECT ${SCOPE_COLUMNS} FROM scopes WHERE tenant_id = $1 AND ($2 = name OR $2 = ANY(aliases)) ORDER BY ($2 = name) DESC LIMIT 1`,
    [tenantId, nameOrAlias],
  );
  return rows[0] ?? null;
}

export interface NameClash {
  /** The requested name or alias that is taken. */
  value: string;
  /** The scope holding it. */
  scope: string;
  /** Whether it is that scope's name or one of its aliases. */
  as: "name" | "alias";
}

/** The first of `values` already used as a name or alias by another scope than `exceptId`. */
export async function findNameClash(db: Queryable, tenantId: string, values: readonly string[], exceptId: string | null): Promise<NameClash | null> {
  const { rows } = await db.query<NameClash>(
    `SELECT v.value, s.name AS scope, CASE WHEN v.value = s.name THEN 'name' ELSE 'alias' END AS "as"
     FROM unnest($2::text[]) WITH ORDINALITY AS v (value, pos)
     JOIN scopes s ON s.tenant_id = $1 AND (v.value = s.name OR v.value = ANY(s.aliases))
     WHERE $3::uuid IS NULL OR s.id <> $3::uuid
     ORDER BY v.pos LIMIT 1`,
    [tenantId, values, exceptId],
  );
  return rows[0] ?? null;
}

/** The first of `projects` already mapped to another scope than `exceptId`. */
export async function findProjectClash(
  db: Queryable,
  tenantId: string,
  projects: readonly string[],
  exceptId: string,
): Promise<{ project: string; scope: string } | null> {
  const { rows } = await db.query<{ project: string; scope: string }>(
    `SELECT p.project, s.name AS scope
     FROM unnest($2::text[]) WITH ORDINALITY AS p (project, pos)
     JOIN scopes s ON s.tenant_id = $1 AND p.project = ANY(s.projects)
     WHERE s.id <> $3::uuid
     ORDER BY p.pos LIMIT 1`,
    [tenantId, projects, exceptId],
  );
  return rows[0] ?? null;
}

export async function insertScope(db: Queryable, scope: { id: string; tenantId: string; name: string; aliases: readonly string[] }): Promise<ScopeRow> {
  const { rows } = await db.query<ScopeRow>(`INSERT INTO scopes (id, tenant_id, name, aliases) VALUES ($1, $2, $3, $4::text[]) RETURNING ${SCOPE_COLUMNS}`, [
    scope.id,
    scope.tenantId,
    scope.name,
    scope.aliases,
  ]);
  return rows[0]!;
}

/** Replaces the given columns of one scope. */
export async function updateScope(
  db: Queryable,
  tenantId: string,
  id: string,
  changes: { name?: string; aliases?: readonly string[]; projects?: readonly string[] },
): Promise<ScopeRow> {
  const { rows } = await db.query<ScopeRow>(
    `UPDATE scopes SET name = COALESCE($3, name), aliases = COALESCE($4::text[], aliases), projects = COALESCE($5::text[], projects)
     WHERE tenant_id = $1 AND id = $2 RETURNING ${SCOPE_COLUMNS}`,
    [tenantId, id, changes.name ?? null, changes.aliases ?? null, changes.projects ?? null],
  );
  return rows[0]!;
}

export async function deleteScopeRow(db: Queryable, tenantId: string, id: string): Promise<void> {
  await db.query("DELETE FROM scopes WHERE tenant_id = $1 AND id = $2", [tenantId, id]);
}

/** The tenant's retrieval policy; no row means off. */
export async function selectRetrievalPolicy(db: Queryable, tenantId: string): Promise<RetrievalPolicyRow> {
  const { rows } = await db.query<RetrievalPolicyRow>(`SELECT mode, default_scope AS scope FROM retrieval_policies WHERE tenant_id = $1`, [tenantId]);
  return rows[0] ?? { mode: "off", scope: null };
}

export async function upsertRetrievalPolicy(db: Queryable, tenantId: string, policy: RetrievalPolicyRow): Promise<RetrievalPolicyRow> {
  const { rows } = await db.query<RetrievalPolicyRow>(
    `INSERT INTO retrieval_policies (tenant_id, mode, default_scope) VALUES ($1, $2, $3)
     ON CONFLICT (tenant_id) DO UPDATE SET mode = EXCLUDED.mode, default_scope = EXCLUDED.default_scope, updated_at = now()
     RETURNING mode, default_scope AS scope`,
    [tenantId, policy.mode, policy.scope],
  );
  return rows[0]!;
}

/** A `default` policy pointing at `from` follows the scope to its new name. */
export async function movePolicyDefault(db: Queryable, tenantId: string, from: string, to: string): Promise<void> {
  await db.query("UPDATE retrieval_policies SET default_scope = $3, updated_at = now() WHERE tenant_id = $1 AND mode = 'default' AND default_scope = $2", [
    tenantId,
    from,
    to,
  ]);
}

/** A `default` policy pointing at a deleted scope fails closed: it becomes `require`. */
export async function failPolicyClosed(db: Queryable, tenantId: string, deleted: string): Promise<void> {
  await db.query(
    "UPDATE retrieval_policies SET mode = 'require', default_scope = NULL, updated_at = now() WHERE tenant_id = $1 AND mode = 'default' AND default_scope = $2",
    [tenantId, deleted],
  );
}

/** The registry every new tenant starts with. */
export const STARTER_SCOPES = ["personal", "work"] as const;

/** Operator-side (owner role): the starter scopes of a new tenant. */
export async function insertStarterScopes(db: Queryable, tenantId: string, ids: readonly string[]): Promise<void> {
  await db.query(
    `INSERT INTO scopes (id, tenant_id, name) SELECT id, $1, name FROM unnest($2::uuid[], $3::text[]) AS s (id, name)
     ON CONFLICT (tenant_id, name) DO NOTHING`,
    [tenantId, ids, STARTER_SCOPES],
  );
}
