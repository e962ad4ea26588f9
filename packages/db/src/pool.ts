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
  /** Extra transaction-local settings (e.g. pgvector's `hnsw.iterative_scan`), applied with the others. */
  settings?: Readonly<Record<string, string>>;
}

/**
 * The only way request work touches tenant data: one transaction that switches to the runtime
 * role and binds the tenant in a transaction-local setting, so row-level security applies even
 * if a query forgets its explicit tenant predicate. Both settings vanish at COMMIT/ROLLBACK, so a
 * pooled connection never carries one tenant's context into another's request.
 */
export function withTenant<T>(pool: Pool, scope: TenantScope, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  return inRoleTransaction(pool, { ...scope, readOnly: scope.readOnly ?? false }, fn);
}

/**
 * Pre-tenant work (API-key lookup, OAuth client and code bookkeeping) as the runtime role, with no
 * tenant bound: RLS shows it no tenant rows. Read-only unless asked otherwise.
 */
export function withRole<T>(pool: Pool, role: string, fn: (client: PoolClient) => Promise<T>, options: { readOnly?: boolean } = {}): Promise<T> {
  return inRoleTransaction(pool, { role, readOnly: options.readOnly ?? true }, fn);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SETTING_NAME = /^[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*$/;

/**
 * Opens the transaction, switches role, binds the tenant and applies any extra settings in ONE
 * round trip (a simple-protocol batch), because every request pays for it: three to four
 * sequential statements cost more than the small queries that follow them. The batch holds no
 * bind parameters, so each interpolated value is checked first: the tenant must be a UUID,
 * setting names are qualified identifiers and values are quoted as literals.
 */
async function inRoleTransaction<T>(
  pool: Pool,
  scope: { role: string; readOnly: boolean; tenantId?: string; snapshot?: boolean; settings?: Readonly<Record<string, string>> },
  fn: (client: PoolClient) => Promise<T>,
): Promise<T> {
  const statements = [
    ["BEGIN", scope.snapshot ? "ISOLATION LEVEL REPEATABLE READ" : "", scope.readOnly ? "READ ONLY" : ""].filter(Boolean).join(" "),
    `SET LOCAL ROLE ${quoteIdentifier(scope.role)}`,
  ];
  const settings: [string, string][] = Object.entries(scope.settings ?? {});
  if (scope.tenantId !== undefined) {
    if (!UUID.test(scope.tenantId)) throw new Error("tenant id is not a UUID");
    settings.unshift(["app.tenant_id", scope.tenantId]);
  }
  for (const [name, value] of settings) {
    if (!SETTING_NAME.test(name)) throw new Error(`unsafe setting name: ${name}`);
    statements.push(`SELECT set_config('${name}', ${quoteLiteral(value)}, true)`);
  }
  const client = await pool.connect();
  try {
    await client.query(statements.join("; "));
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

/** A string as a SQL literal (standard_conforming_strings is on in every supported version). */
function quoteLiteral(value: string): string {
  if (value.includes("\0")) throw new Error("NUL in SQL literal");
  return `'${value.replace(/'/g, "''")}'`;
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
