import pg from "pg";

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
export type Queryable = Pick<pg.PoolClient, "query">;

export interface PoolOptions {
  connectionString: string;
  max?: number;
  /** Shown in pg_stat_activity, so an operator can tell the services apart. */
  applicationName: string;
}

export function createPool(options: PoolOptions): Pool {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    application_name: options.applicationName,
    // A dead database should fail a request quickly rather than hang it until the gRPC deadline.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its connection must not crash the process; the next checkout reconnects.
  pool.on("error", () => {});
  return pool;
}

/** Runs fn in a transaction as the connecting (owner) role: migrations and operator commands only. */
export async function withOwnerTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

export interface TenantScope {
  /** The database role request work runs as (no BYPASSRLS, no DELETE). */
  role: string;
  tenantId: string;
  readOnly?: boolean;
  /** REPEATABLE READ: every statement of the transaction sees one snapshot (multi-query reads that must agree). */
  snapshot?: boolean;
}

/**
 * The only way request work touches tenant data: one transaction that switches to the runtime
 * role and binds the tenant in a transaction-local setting, so row-level security applies even
 * if a query forgets its explicit tenant predicate. Both settings vanish at COMMIT/ROLLBACK, so a
 * pooled connection never carries one tenant's context into another's request.
 */
export function withTenant<T>(pool: Pool, scope: TenantScope, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  return inRoleTransaction(pool, scope.role, scope.readOnly ?? false, scope.tenantId, fn, scope.snapshot ?? false);
}

/**
 * Pre-tenant work (API-key lookup, OAuth client and code bookkeeping) as the runtime role, with no
 * tenant bound: RLS shows it no tenant rows. Read-only unless asked otherwise.
 */
export function withRole<T>(pool: Pool, role: string, fn: (client: PoolClient) => Promise<T>, options: { readOnly?: boolean } = {}): Promise<T> {
  return inRoleTransaction(pool, role, options.readOnly ?? true, undefined, fn);
}

async function inRoleTransaction<T>(
  pool: Pool,
  role: string,
  readOnly: boolean,
  tenantId: string | undefined,
  fn: (client: PoolClient) => Promise<T>,
  snapshot = false,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(["BEGIN", snapshot ? "ISOLATION LEVEL REPEATABLE READ" : "", readOnly ? "READ ONLY" : ""].filter(Boolean).join(" "));
    await client.query(`SET LOCAL ROLE ${quoteIdentifier(role)}`);
    if (tenantId !== undefined) await client.query("SELECT set_config('app.tenant_id', $1, true)", [tenantId]);
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

export function quoteIdentifier(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unsafe SQL identifier: ${name}`);
  return `"${name}"`;
}

/** True when the database answers. */
export async function ping(pool: Pool): Promise<boolean> {
  try {
    await pool.query("SELECT 1");
    return true;
  } catch {
    return false;
  }
}
