/**
 * Where a standalone search spends its time. After the MCP run the server is stopped and its data
 * directory opened again in this process with the same embedded database and the real search
 * service, so each layer can be timed on its own:
 * - the model: one query embedded by the bundled model, nothing else;
 * - the search service over gRPC on loopback (credential signing and checking, protobuf, HTTP/2,
 *   the service's own work), first time and with the query's embedding cached;
 * - inside PGlite: time spent executing protocol messages in the WebAssembly backend during those
 *   calls, and how many messages (each Parse, Bind, Execute, Sync is one) a search sends;
 * - the socket: a `SELECT 1` through an ordinary pg pool, minus its time inside PGlite.
 * What the MCP figure has above the gRPC one is the gateway: HTTP, authentication, the MCP server.
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createPool } from "@3ngram/db";
import { createEmbedder, parseEmbeddingsConfig } from "@3ngram/embeddings";
import { searchServices } from "@3ngram/proto/search/v1";
import { connectPeer, SCOPES } from "@3ngram/rpc";
import { MEMORY_TYPES, searchContracts } from "@3ngram/schema";
import { createLogger } from "@3ngram/runtime";
import { loadSearchConfig, startSearchService, type RunningSearchService } from "@3ngram/search";
import { readIdentity, startEmbeddedPostgres } from "@3ngram/standalone";
import { createTestKeys } from "../test/support/keys.js";
import { percentiles, type Percentiles } from "./stats.js";
import { ms } from "./workload.js";

export interface Breakdown {
  model: Percentiles;
  grpcFirst: Percentiles;
  grpcCached: Percentiles;
  /** Per cached search: ms inside PGlite, and protocol messages executed. */
  sqlCached: Percentiles;
  messagesPerSearch: number;
  chronologicalGrpc: Percentiles;
  sqlChronological: Percentiles;
  selectOne: Percentiles;
  selectOneInside: Percentiles;
}

export async function measureBreakdown(dataDir: string, queries: readonly string[], env: Record<string, string>): Promise<Breakdown> {
  const identity = readIdentity(dataDir);
  if (!identity) throw new Error(`no standalone identity in ${dataDir}`);
  // The server's settings (the bench passes its STANDALONE_* variables to both).
  const postgres = await startEmbeddedPostgres(join(dataDir, "pg"), { sharedBuffers: env.STANDALONE_SHARED_BUFFERS });
  // Count what the socket server hands to the backend, and how long the backend takes with it.
  let insideMs = 0;
  let messages = 0;
  const db = postgres.db;
  const exec = db.execProtocolRawStream.bind(db);
  db.execProtocolRawStream = async (message, options) => {
    const start = performance.now();
    try {
      return await exec(message, options);
    } finally {
      insideMs += performance.now() - start;
      messages++;
    }
  };
  const keys = await createTestKeys();
  const log = createLogger({ service: "bench", level: "silent" });
  const embedder = await createEmbedder(parseEmbeddingsConfig(env));
  const search = await startSearchService(
    loadSearchConfig({
      ...env,
      // The vector leg standalone uses (standalone.ts sets the same default).
      SEARCH_VECTOR_INDEX: env.SEARCH_VECTOR_INDEX ?? "memory",
      DATABASE_URL: postgres.url,
      DATABASE_POOL_MAX: "4",
      SERVICE_TRUSTED_JWKS: keys.trustedJwks,
      GRPC_HOST: "127.0.0.1",
      GRPC_PORT: "0",
      METRICS_PORT: "0",
    }),
    { embedder, log },
  );
  const pool = createPool({ connectionString: postgres.url, max: 1, applicationName: "bench" });
  const peer = connectPeer(searchServices, searchContracts, { address: search.address, audience: "search", signer: await keys.signer("bench") });
  const client = peer.search;
  const as = { identity: { tenantId: identity.tenantId, userId: identity.userId, scopes: [SCOPES.read] } };
  const timed = async (call: () => Promise<unknown>) => {
    const start = performance.now();
    await call();
    return performance.now() - start;
  };
  const inside = async (call: () => Promise<unknown>) => {
    const before = { insideMs, messages };
    const total = await timed(call);
    return { total, sql: insideMs - before.insideMs, messages: messages - before.messages };
  };
  try {
    await untilIndexAnswers(search.registry, () => client.search({ query: "warm the vector index", limit: 10 }, as));
    const model: number[] = [];
    if (embedder) for (const q of queries) model.push(await timed(() => embedder.embed([`model ${q}`])));
    const grpcFirst: number[] = [];
    for (const q of queries) grpcFirst.push(await timed(() => client.search({ query: q, limit: 10 }, as)));
    const cached = [];
    for (const q of queries) cached.push(await inside(() => client.search({ query: q, limit: 10 }, as)));
    const chrono = [];
    for (let i = 0; i < queries.length; i++) {
      const memoryType = MEMORY_TYPES[i % MEMORY_TYPES.length]!;
      chrono.push(await inside(() => client.search({ order: "chronological", memoryTypes: [memoryType], limit: 25 }, as)));
    }
    const one = [];
    for (let i = 0; i < queries.length; i++) one.push(await inside(() => pool.query("SELECT 1")));
    return {
      model: percentiles(model),
      grpcFirst: percentiles(grpcFirst),
      grpcCached: percentiles(cached.map((c) => c.total)),
      sqlCached: percentiles(cached.map((c) => c.sql)),
      messagesPerSearch: percentiles(cached.map((c) => c.messages)).p50,
      chronologicalGrpc: percentiles(chrono.map((c) => c.total)),
      sqlChronological: percentiles(chrono.map((c) => c.sql)),
      selectOne: percentiles(one.map((c) => c.total)),
      selectOneInside: percentiles(one.map((c) => c.sql)),
    };
  } finally {
    peer.close();
    await pool.end();
    await search.close();
    await postgres.close();
  }
}

/**
 * With the in-process vector index, searches until one is answered from it (it loads in the
 * background after the first), so the timed searches measure the leg standalone runs on.
 */
async function untilIndexAnswers(registry: RunningSearchService["registry"], search: () => Promise<unknown>): Promise<void> {
  const fromIndex = async () => {
    const metric = registry.getSingleMetric("threengram_search_vector_leg_total");
    if (!metric) return true;
    return ((await metric.get()).values.find((v) => v.labels.source === "memory")?.value ?? 0) > 0;
  };
  for (let i = 0; i < 100 && !(await fromIndex()); i++) {
    await search();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function printBreakdown(n: number, b: Breakdown, mcpCachedP50: number, mcpFirstP50: number, chronoMcpP50: number | undefined): void {
  const row = (what: string, p: Percentiles, note = "") => console.log(`| ${what} | ${ms(p.p50)} | ${ms(p.p95)} | ${note} |`);
  console.log(`\nwhere a standalone search goes, N = ${n} (ms; in this process on the same data directory after the MCP run)\n`);
  console.log("| stage | p50 | p95 | note |");
  console.log("|---|---|---|---|");
  console.log(`| MCP end to end, first time / embedding cached (from the run above) | ${ms(mcpFirstP50)} / ${ms(mcpCachedP50)} | | |`);
  row("the model: one query embedded", b.model);
  row("search service over gRPC, first time", b.grpcFirst);
  row("search service over gRPC, embedding cached", b.grpcCached, `gateway + MCP ≈ ${ms(mcpCachedP50 - b.grpcCached.p50)} ms above this`);
  row("… of which inside PGlite", b.sqlCached, `${b.messagesPerSearch} protocol messages per search`);
  row("chronological listing over gRPC", b.chronologicalGrpc, chronoMcpP50 !== undefined ? `MCP p50 ${ms(chronoMcpP50)}` : "");
  row("… of which inside PGlite", b.sqlChronological);
  row("SELECT 1 through a pg pool", b.selectOne);
  row("… of which inside PGlite", b.selectOneInside, "the rest is the socket and the pg client");
}
