import type { Queryable } from "@3ngram/db";

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
