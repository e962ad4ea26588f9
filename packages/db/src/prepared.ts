import { createHash } from "node:crypto";
import type { PoolClient, Queryable } from "./pool.js";

/** Distinct statement texts given a name, process-wide; texts beyond it run unnamed (as before). */
const MAX_NAMED_TEXTS = 256;

const hashes = new Map<string, string>();

/**
 * Each live connection holds a serial, part of its statement names. Standalone's PGlite serves
 * every pooled connection from ONE backend session, so two pg clients must never claim one name
 * there, and a closed client's statements stay in that session. Serials are therefore recycled:
 * a connection adopting a closed one's serial first drops whatever that one left prepared, which
 * keeps the shared session's statements bounded by the live connections. (On PostgreSQL each
 * connection is its own session and the sweep finds nothing.)
 */
const serials = new WeakMap<object, { prefix: string; swept: boolean }>();
const freeSerials: number[] = [];
let nextSerial = 0;

/**
 * The client with every parameterised query sent as a named prepared statement, so the server
 * parses (and may plan) each distinct text once per connection instead of on every request; a new
 * connection prepares again on first use (pg keeps the names per client). Search and listing texts
 * are built from the request's shape (filters, number of query terms), so the names are bounded:
 * past MAX_NAMED_TEXTS distinct texts, the rest run unnamed.
 */
export function withPreparedStatements(client: PoolClient): Queryable {
  const query = async (text: unknown, values?: unknown) => {
    if (typeof text !== "string" || !Array.isArray(values)) return client.query(text as never, values as never);
    const hash = nameFor(text);
    if (hash === undefined) return client.query(text, values);
    return client.query({ name: `${await prefixOf(client)}${hash}`, text, values });
  };
  // The overloads of pg's query() collapse to the two call shapes above.
  return { query: query as PoolClient["query"] };
}

function nameFor(text: string): string | undefined {
  let hash = hashes.get(text);
  if (hash === undefined && hashes.size < MAX_NAMED_TEXTS) {
    hash = createHash("sha1").update(text).digest("hex").slice(0, 24);
    hashes.set(text, hash);
  }
  return hash;
}

async function prefixOf(client: PoolClient): Promise<string> {
  let held = serials.get(client);
  if (held === undefined) {
    const recycled = freeSerials.pop();
    const serial = recycled ?? nextSerial++;
    client.once("end", () => freeSerials.push(serial));
    held = { prefix: `p${serial}_`, swept: recycled === undefined };
    serials.set(client, held);
  }
  if (!held.swept) {
    // A failed sweep fails this query (and its transaction) and is tried again on the next.
    await sweep(client, held.prefix);
    held.swept = true;
  }
  return held.prefix;
}

/** Drops the statements a closed connection left under this prefix in a shared session. */
async function sweep(client: PoolClient, prefix: string): Promise<void> {
  const { rows } = await client.query<{ sql: string | null }>(
    "SELECT string_agg(format('DEALLOCATE %I', name), '; ') AS sql FROM pg_prepared_statements WHERE starts_with(name, $1)",
    [prefix],
  );
  if (rows[0]?.sql) await client.query(rows[0].sql);
}
