import type { Queryable } from "./pool.js";

/**
 * Refuses to serve when the runtime role could escape row-level security: a superuser or a
 * BYPASSRLS role would see every tenant's rows whatever the policies say.
 */
export async function assertRoleRespectsRls(db: Queryable, role: string): Promise<void> {
  const { rows } = await db.query<{ rolsuper: boolean; rolbypassrls: boolean }>("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = $1", [role]);
  const row = rows[0];
  if (!row) throw new Error(`database role ${role} does not exist (run the migrations)`);
  if (row.rolsuper || row.rolbypassrls) throw new Error(`database role ${role} can bypass row-level security; refusing to serve`);
}
