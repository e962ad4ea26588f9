import pg from "pg";
import { asUnavailable, isTransientDatabaseError } from "./transient.js";

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
export type Queryable = Pick<pg.PoolClient, "query">;

export interface PoolOptions {
  connectionString: string;
  max?: number;
  /** Shown in pg_stat_activity, so an operator can tell the services apart. */
  applicationName: string;
}

/**
 * The pool a service was handed (its owner ends it: standalone shares one among services), or a
 * new one the service ends when it closes (`defer`).
 */
export function givenOrNewPool(given: Pool | undefined, options: PoolOptions, defer: (release: () => Promise<void>) => void): Pool {
  if (given !== undefined) return given;
  const pool = createPool(options);
  defer(() => pool.end());
  return pool;
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

/**
 * Runs fn in a transaction as the connecting (owner) role: migrations and operator commands only.
 * With a tenant, binds it as the runtime roles do, so row-level security holds even for an owner
 * that is not a superuser.
 */
export function withOwnerTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>, options: { tenantId?: string } = {}): Promise<T> {
  return inTransaction(pool, ["BEGIN", ...settingStatements(options.tenantId, {})].join("; "), fn);
}

/**
 * Runs fn on one checked-out connection outside any transaction (a session that holds an
 * advisory lock across several transactions, like the migrator). The connection may die under
 * fn; that surfaces as fn's rejection, never as a process-wide error.
 */
export async function withClient<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const { client, release } = await checkout(pool);
  let failure: unknown;
  try {
    return await fn(client);
  } catch (err) {
    failure = err;
    throw asUnavailable(err);
  } finally {
    release(failure);
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
 * tenant bound: RLS shows it no tenant rows unless a setting switches a narrow cross-tenant policy
 * on (`settings`). Read-only unless asked otherwise.
 */
export function withRole<T>(
  pool: Pool,
  role: string,
  fn: (client: PoolClient) => Promise<T>,
  options: { readOnly?: boolean; settings?: Readonly<Record<string, string>> } = {},
): Promise<T> {
  return inRoleTransaction(pool, { role, readOnly: options.readOnly ?? true, ...(options.settings ? { settings: options.settings } : {}) }, fn);
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
  statements.push(...settingStatements(scope.tenantId, scope.settings ?? {}));
  return inTransaction(pool, statements.join("; "), fn, { readOnly: scope.readOnly });
}

/** The transaction-local settings (the tenant first, when there is one) as checked statements. */
function settingStatements(tenantId: string | undefined, extra: Readonly<Record<string, string>>): string[] {
  const settings: [string, string][] = Object.entries(extra);
  if (tenantId !== undefined) {
    if (!UUID.test(tenantId)) throw new Error("tenant id is not a UUID");
    settings.unshift(["app.tenant_id", tenantId]);
  }
  return settings.map(([name, value]) => {
    if (!SETTING_NAME.test(name)) throw new Error(`unsafe setting name: ${name}`);
    return `SELECT set_config('${name}', ${quoteLiteral(value)}, true)`;
  });
}

/**
 * One transaction on one checked-out connection. A transient failure (the server restarting under
 * us, the connection refused) is answered as `unavailable` and the connection is dropped rather
 * than pooled again; a COMMIT lost that way may or may not have landed, which is what idempotency
 * keys are for.
 *
 * A read-only transaction answers without waiting for its COMMIT (one round trip less on every
 * read: ~0.1 ms on a loopback connection, docs/benchmarks.md). It has written nothing, so nothing
 * can be lost, and its settings end with it whichever way the COMMIT goes. The connection goes
 * back to the pool with the COMMIT still in flight: node-postgres sends one query at a time, in
 * order, so the next transaction's BEGIN reaches the server after it. Should the connection die
 * before the COMMIT is answered, the pool drops it (or its next user's first query fails as
 * unavailable, as after any restart).
 */
async function inTransaction<T>(pool: Pool, begin: string, fn: (client: PoolClient) => Promise<T>, options: { readOnly?: boolean } = {}): Promise<T> {
  const { client, release } = await checkout(pool);
  let failure: unknown;
  try {
    await client.query(begin);
    const result = await fn(client);
    const committed = client.query("COMMIT");
    if (options.readOnly) committed.catch(() => {});
    else await committed;
    return result;
  } catch (err) {
    failure = err;
    await client.query("ROLLBACK").catch(() => {});
    throw asUnavailable(err);
  } finally {
    release(failure);
  }
}

/**
 * Checks a connection out with an 'error' listener of its own. The pool listens only to idle
 * clients; a checked-out one whose server goes away (restart, 57P01) emits 'error', and an
 * 'error' nobody listens to ends the process. The failure still reaches the pending query,
 * which is where it is handled; the listener only records that the connection is broken.
 *
 * The listener is attached inside the pool's callback, in the same turn that hands the client
 * out. A new connection whose server is shutting down receives "ready" and the FATAL message in
 * one read, and node-postgres emits 'error' straight after the hand-out: a listener added after
 * `await pool.connect()` would come one microtask too late (test/checkout-race.int.test.ts).
 */
async function checkout(pool: Pool): Promise<{ client: PoolClient; release(failure: unknown): void }> {
  let broken: Error | undefined;
  const onError = (err: Error) => {
    broken = err;
  };
  const client = await new Promise<PoolClient>((resolve, reject) => {
    pool.connect((err, connected) => {
      if (err || !connected) return reject(asUnavailable(err ?? new Error("the pool gave no connection")));
      connected.on("error", onError);
      resolve(connected);
    });
  });
  return {
    client,
    release(failure: unknown) {
      client.removeListener("error", onError);
      // A broken or possibly broken connection is destroyed instead of handed to the next request.
      const discard = broken ?? (isTransientDatabaseError(failure) ? (failure as Error) : undefined);
      client.release(discard);
    },
  };
}

/** A string as a SQL literal (standard_conforming_strings is on in every supported version). */
function quoteLiteral(value: string): string {
  if (value.includes("\0")) throw new Error("NUL in SQL literal");
  return `'${value.replace(/'/g, "''")}'`;
}

function quoteIdentifier(name: string): string {
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
