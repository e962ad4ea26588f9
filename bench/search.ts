/**
 * Search latency benchmark: loads N generated memories into one tenant, builds the HNSW index,
 * and measures fused search (a) at the search service over gRPC and (b) end to end through the
 * gateway's MCP endpoint, plus chronological listing. Prints a table.
 *
 *   npm run bench:search                       # 10k and 100k
 *   npm run bench:search -- --sizes 2000 --queries 50
 *   npm run bench:search -- --sizes 100000 --keep   # leave the database for EXPLAIN
 *   npm run bench:search -- --reuse <line printed by --keep>   # measure a kept database again
 *   npm run bench:search -- --warmup 1000       # steady state: warm buffers before measuring (default 200)
 *   npm run bench:search -- --dimensions 512    # vectors of 512 dimensions (default: the default model's 384)
 *   npm run bench:search -- --compare-gateway DIR  # a second gateway from another build's dist (e.g. a copy
 *                                                 # taken before a change), MCP queries alternating between the two
 *   npm run bench:search -- --layers            # also each layer's share of an MCP search: gRPC, REST, MCP over
 *                                                 # plain HTTP, MCP with the official client, interleaved (search-layers.ts)
 *
 * SEARCH_TERM_CACHE_SIZE=0 in the environment measures with every query word counted afresh
 * (the queries reuse a small vocabulary, so by default most word counts come from the cache).
 *
 * Content is generated deterministically; vectors come from the hashing embedder (bulk load
 * speed), so the figures exclude model time by construction. They have the dimension of the model
 * a server runs by default (e5-small-v2: 384) unless `--dimensions 512` asks for the other indexed
 * one; 512-dimension vectors are stored out of line (TOAST), 384-dimension ones in the row. Each query string is unique, so the
 * query-embedding cache never answers for the model.
 */
import { performance } from "node:perf_hooks";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { HashingEmbedder } from "@3ngram/embeddings";
import { gatewayConfigSchema, startGateway } from "@3ngram/gateway";
import { createTenantWithKey, loadMemoryConfig, startMemoryService } from "@3ngram/memory";
import { searchServices } from "@3ngram/proto/search/v1";
import { createMemoryQueueBackend } from "@3ngram/queue";
import { connectPeer, SCOPES } from "@3ngram/rpc";
import { searchContracts } from "@3ngram/schema";
import { createLogger, loadConfig } from "@3ngram/runtime";
import { loadSearchConfig, startSearchService } from "@3ngram/search";
import { createPool, toVectorLiteral, type Pool } from "@3ngram/db";
import { createTestDatabase } from "../test/support/database.js";
import { createTestKeys } from "../test/support/keys.js";
import { connectMcp } from "../test/support/mcp.js";
import { LAYERS, layerQueryCount, measureLayers, type Layer } from "./search-layers.js";
import { flagValue, hashingDimensions, percentiles, pick, prng, type Percentiles } from "./stats.js";
import { OBJECTS, SUBJECTS } from "./vocabulary.js";

const TYPES = ["decision", "commitment", "blocker", "fact", "preference", "pattern", "note", "event"] as const;
const VERBS = ["chose", "moved", "replaced", "blocked", "measured", "agreed", "deferred", "shipped", "reviewed", "rejected", "documented", "tuned"];
const DETAILS = [
  "because latency doubled",
  "after the incident review",
  "for the Q3 launch",
  "to cut cloud cost",
  "per the security audit",
  "since customers asked",
  "until the vendor replies",
  "with a two week rollback window",
];
const BATCH = 1000;
/** Distinct queries run before measuring (see --warmup): enough to settle the buffer cache after a bulk load. */
const DEFAULT_WARMUP = 200;

function generate(n: number): Array<{ type: string; topic: string; content: string; project: string }> {
  const random = prng(42);
  return Array.from({ length: n }, (_, i) => {
    const subject = pick(random, SUBJECTS);
    return {
      type: pick(random, TYPES),
      topic: `${subject} ${pick(random, OBJECTS)}`,
      content: `Item ${i}: the ${subject} team ${pick(random, VERBS)} ${pick(random, OBJECTS)} ${pick(random, DETAILS)}.`,
      project: `project-${i % 20}`,
    };
  });
}

function queries(count: number): string[] {
  const random = prng(7);
  return Array.from({ length: count }, (_, i) =>
    i % 4 === 0
      ? `${pick(random, SUBJECTS)} ${i}`
      : `what did the ${pick(random, SUBJECTS)} team decide about ${pick(random, OBJECTS)} ${pick(random, DETAILS)} ${i}`,
  );
}

async function timed(runs: number, call: (i: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await call(i);
    samples.push(performance.now() - start);
  }
  return samples;
}

interface Row {
  n: number;
  loadS: number;
  indexS: number;
  grpc: ReturnType<typeof percentiles>;
  mcp: ReturnType<typeof percentiles>;
  /** Through the --compare-gateway build, its queries alternating with the column above. */
  mcpCompared: ReturnType<typeof percentiles> | undefined;
  chrono: ReturnType<typeof percentiles>;
  /** With --layers: each layer in front of the search service, measured interleaved. */
  layers: Record<Layer, Percentiles> | undefined;
}

/** A database kept by an earlier --keep run: its URL, the bench tenant and user, and their API key. */
interface Reuse {
  url: string;
  tenantId: string;
  userId: string;
  apiKey: string;
}

/** Inserts n generated memories with hashing vectors, then builds the HNSW index; answers both durations. */
async function load(pool: Pool, embedder: HashingEmbedder, tenantId: string, n: number): Promise<{ loadS: number; indexS: number }> {
  // Load first, index afterwards: several times faster than maintaining HNSW row by row.
  const loadStart = performance.now();
  const dims = embedder.dimensions;
  await pool.query(`DROP INDEX memories_embedding_${dims}_hnsw`);
  const rows = generate(n);
  for (let at = 0; at < rows.length; at += BATCH) {
    const batch = rows.slice(at, at + BATCH);
    const vectors = await embedder.embed(batch.map((r) => `${r.topic}\n${r.content}`));
    await pool.query(
      `INSERT INTO memories (id, tenant_id, memory_type, topic, content, content_hash, scope, project, embedding, embedding_model, embedding_dim, recorded_at)
       SELECT gen_random_uuid(), $1, t, tp, c, md5(c), 'personal', p, v::vector, $2, $9, now() - (i * interval '1 minute')
       FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[]) AS u(t, tp, c, p, v, i)`,
      [
        tenantId,
        embedder.model,
        batch.map((r) => r.type),
        batch.map((r) => r.topic),
        batch.map((r) => r.content),
        batch.map((r) => r.project),
        vectors.map((v) => toVectorLiteral(v)),
        batch.map((_, j) => at + j),
        dims,
      ],
    );
  }
  const loadS = (performance.now() - loadStart) / 1000;
  const indexStart = performance.now();
  await pool.query("SET maintenance_work_mem = '512MB'");
  // The same partial index as the migrations create for this dimension (0001: 512, 0013: 384).
  await pool.query(
    `CREATE INDEX memories_embedding_${dims}_hnsw ON memories USING hnsw ((embedding::vector(${dims})) vector_cosine_ops) WHERE embedding_dim = ${dims}`,
  );
  const indexS = (performance.now() - indexStart) / 1000;
  // What autovacuum does soon after a bulk load in production: without it the GIN index's metapage
  // statistics still describe the empty index and the planner prices a full-text probe as dearer
  // than scanning the tenant (the 10k row once measured slower than the 100k one for this reason).
  await pool.query("VACUUM ANALYZE memories");
  return { loadS, indexS };
}

/** The dimension of the vectors a kept database holds. */
async function storedDimension(url: string): Promise<number> {
  const pool = createPool({ connectionString: url, max: 1, applicationName: "bench-search" });
  try {
    const { rows } = await pool.query<{ dim: number }>("SELECT embedding_dim AS dim FROM memories WHERE embedding_dim IS NOT NULL LIMIT 1");
    if (!rows[0]) throw new Error("the kept database holds no embedded memory");
    return rows[0].dim;
  } finally {
    await pool.end();
  }
}

/** Node's own import(): the module runner this script is loaded by has closed once main() runs. */
const nativeImport = new Function("specifier", "return import(specifier)") as (specifier: string) => Promise<unknown>;

async function benchOne(
  n: number,
  options: { queryCount: number; warmup: number; keep: boolean; reuse: Reuse | null; compareDir: string | undefined; dimensions: number; layers: boolean },
): Promise<Row> {
  const { queryCount, warmup, keep, reuse, compareDir } = options;
  const db = reuse ? { url: reuse.url, drop: async () => {} } : await createTestDatabase(`bench${n}`);
  const log = createLogger({ service: "bench", level: "silent" });
  // A kept database is searched with the vectors' own dimension, whatever --dimensions says.
  const dimensions = reuse ? await storedDimension(db.url) : options.dimensions;
  const embedder = new HashingEmbedder({ dimensions });
  const keys = await createTestKeys();
  const env = {
    DATABASE_URL: db.url,
    DATABASE_POOL_MAX: "4",
    SERVICE_TRUSTED_JWKS: keys.trustedJwks,
    SERVICE_SIGNING_JWK: keys.signingJwk,
    GRPC_HOST: "127.0.0.1",
    GRPC_PORT: "0",
    METRICS_PORT: "0",
    EMBEDDINGS_PROVIDER: "hashing",
    EMBEDDINGS_DIMENSIONS: String(dimensions),
    LOG_LEVEL: "silent",
    ...(process.env.SEARCH_TERM_CACHE_SIZE !== undefined ? { SEARCH_TERM_CACHE_SIZE: process.env.SEARCH_TERM_CACHE_SIZE } : {}),
  };
  const queue = createMemoryQueueBackend();
  const memory = await startMemoryService(loadMemoryConfig(env), { embedder, queue: queue.queue, queueCounts: queue.counts, log });
  const search = await startSearchService(loadSearchConfig(env), { embedder, log });
  // Budgets far above what the bench sends (--layers sends 800 requests a minute on one key): the
  // limiter's work per request is the same whatever the budget, and a 429 would end the run.
  const unlimited = { RATE_LIMIT_IP_PER_MINUTE: "1000000", RATE_LIMIT_USER_PER_MINUTE: "1000000", RATE_LIMIT_KEY_PER_MINUTE: "1000000" };
  const gatewayEnv = { ...env, ...unlimited, PORT: "0", HOST: "127.0.0.1", MEMORY_ADDR: memory.address, SEARCH_ADDR: search.address };
  const gateway = await startGateway(loadConfig(gatewayConfigSchema, gatewayEnv), { log });
  const compared = compareDir === undefined ? undefined : await startComparedGateway(compareDir, gatewayEnv, log);
  let tenant: Omit<Reuse, "url"> | null = reuse;
  try {
    tenant ??= await createTenantWithKey(memory.pool, { tenantName: "bench" });
    const { loadS, indexS } = reuse ? { loadS: 0, indexS: 0 } : await load(memory.pool, embedder, tenant.tenantId, n);
    if (reuse) n = Number((await memory.pool.query<{ n: string }>("SELECT count(*) AS n FROM memories WHERE tenant_id = $1", [tenant.tenantId])).rows[0]!.n);

    const signer = await keys.signer("bench");
    // The peer the gateway holds: the bridge's conversions are part of what a gRPC search costs.
    const peer = connectPeer(searchServices, searchContracts, { address: search.address, audience: "search", signer });
    const client = peer.search;
    const as = { identity: { tenantId: tenant.tenantId, userId: tenant.userId, scopes: [SCOPES.read] } };
    // Every query text is used once. Measured: [0, Q) gRPC, [Q, 2Q) MCP, [2Q, 3Q) the compared
    // gateway, then --layers' own; then the warm-up queries, distinct from all of them (their own
    // query numbers), so they warm the process and the database's buffers without answering a
    // measured query from any cache. Each measured path is warmed: a gateway whose MCP path had
    // never run answered its first measured queries with code V8 had not yet optimised (the MCP
    // p50 was ~0.5 ms higher than with its own warm-up: docs/benchmarks.md, the 2026-12-07 18:00–19:00
    // section).
    const measured = queryCount * 3 + (options.layers ? layerQueryCount(queryCount) : 0);
    const texts = queries(measured + warmup * 2);
    const warmupText = (path: "grpc" | "mcp", i: number) => texts[measured + (path === "grpc" ? 0 : warmup) + i]!;
    await timed(warmup, (i) => client.search({ query: warmupText("grpc", i), limit: 5 }, as));
    const grpc = await timed(queryCount, (i) => client.search({ query: texts[i]!, limit: 5 }, as));
    const mcp = await connectMcp(`${gateway.url}/mcp`, tenant.apiKey, { modern: true });
    let viaMcp: number[];
    let viaCompared: number[] | undefined;
    if (compared === undefined) {
      await timed(warmup, (i) => mcp.call("search", { query: warmupText("mcp", i), limit: 5 }));
      viaMcp = await timed(queryCount, (i) => mcp.call("search", { query: texts[queryCount + i]!, limit: 5 }));
    } else {
      // One query through each gateway in turn, each its own query text, so both see the same moments of a busy machine.
      const other = await connectMcp(`${compared.url}/mcp`, tenant.apiKey, { modern: true });
      await timed(warmup, (i) => (i % 2 === 0 ? mcp : other).call("search", { query: warmupText("mcp", i), limit: 5 }));
      const turns = await timed(queryCount * 2, (i) =>
        i % 2 === 0
          ? mcp.call("search", { query: texts[queryCount + i / 2]!, limit: 5 })
          : other.call("search", { query: texts[queryCount * 2 + (i - 1) / 2]!, limit: 5 }),
      );
      viaMcp = turns.filter((_, i) => i % 2 === 0);
      viaCompared = turns.filter((_, i) => i % 2 === 1);
      await other.close();
    }
    await mcp.close();
    const chrono = await timed(queryCount, (i) =>
      client.search({ order: "chronological", memoryTypes: [TYPES[i % TYPES.length]!], projects: [`project-${i % 20}`], limit: 25 }, as),
    );
    const layers = options.layers
      ? await measureLayers(
          { gatewayUrl: gateway.url, apiKey: tenant.apiKey, grpcSearch: (query) => client.search({ query, limit: 5 }, as) },
          texts.slice(queryCount * 3, measured),
          queryCount,
        )
      : undefined;
    peer.close();
    return {
      n,
      loadS,
      indexS,
      grpc: percentiles(grpc),
      mcp: percentiles(viaMcp),
      mcpCompared: viaCompared === undefined ? undefined : percentiles(viaCompared),
      chrono: percentiles(chrono),
      layers,
    };
  } finally {
    await compared?.close();
    await gateway.close();
    await search.close();
    await memory.close();
    await queue.close();
    if (keep && !reuse)
      process.stderr.write(`kept database; measure it again with --reuse ${[db.url, tenant?.tenantId, tenant?.userId, tenant?.apiKey].join(",")}\n`);
    else await db.drop();
  }
}

interface ComparedGatewayModule {
  startGateway: typeof startGateway;
  gatewayConfigSchema: typeof gatewayConfigSchema;
}

/** The gateway of another build (its compiled dist directory), on the same services and database. */
async function startComparedGateway(dir: string, env: Record<string, string>, log: ReturnType<typeof createLogger>) {
  const module = (await nativeImport(pathToFileURL(resolve(dir, "index.js")).href)) as ComparedGatewayModule;
  return module.startGateway(loadConfig(module.gatewayConfigSchema, env), { log });
}

function parseArgs(argv: readonly string[]): {
  sizes: number[];
  queries: number;
  warmup: number;
  keep: boolean;
  reuse: Reuse | null;
  compareGateway: string | undefined;
  dimensions: number;
  layers: boolean;
} {
  const value = (flag: string) => flagValue(argv, flag);
  const sizes = (value("--sizes") ?? "10000,100000").split(",").map(Number);
  const count = Number(value("--queries") ?? 200);
  const warmup = Number(value("--warmup") ?? DEFAULT_WARMUP);
  if (!Number.isInteger(warmup) || warmup < 0) throw new Error("usage: --warmup <queries before measuring>");
  if (sizes.some((s) => !Number.isInteger(s) || s < 100) || !Number.isInteger(count) || count < 10)
    throw new Error("usage: --sizes 10000,100000 --queries 200");
  const reuseArg = value("--reuse");
  let reuse: Reuse | null = null;
  if (reuseArg !== undefined) {
    const [url, tenantId, userId, apiKey] = reuseArg.split(",");
    if (!url || !tenantId || !userId || !apiKey) throw new Error("usage: --reuse <database url>,<tenant id>,<user id>,<api key> (printed by --keep)");
    reuse = { url, tenantId, userId, apiKey };
  }
  const dimensions = hashingDimensions(argv);
  return {
    sizes: reuse ? [0] : sizes,
    queries: count,
    warmup,
    keep: argv.includes("--keep"),
    reuse,
    compareGateway: value("--compare-gateway"),
    dimensions,
    layers: argv.includes("--layers"),
  };
}

export async function main(argv: readonly string[]): Promise<number> {
  const { sizes, queries: queryCount, warmup, keep, reuse, compareGateway, dimensions, layers } = parseArgs(argv);
  const results: Row[] = [];
  for (const n of sizes) {
    if (!reuse) process.stderr.write(`loading ${n} memories…\n`);
    results.push(await benchOne(n, { queryCount, warmup, keep, reuse, compareDir: compareGateway, dimensions, layers }));
  }
  console.log(
    `\nsearch benchmark (Node.js ${process.versions.node}; ${warmup} warm-up queries, then ${queryCount} per column, sequential, limit 5; chronological: limit 25, type + project filter)`,
  );
  console.log("memories  load s  index s | gRPC p50   p95     p99   | MCP p50    p95     p99   | chrono p50 p95     p99   (ms)");
  for (const r of results) {
    console.log(
      `${String(r.n).padStart(8)} ${r.loadS.toFixed(1).padStart(7)} ${r.indexS.toFixed(1).padStart(8)} |${ms(r.grpc.p50)} ${ms(r.grpc.p95)} ${ms(r.grpc.p99)} |${ms(r.mcp.p50)} ${ms(r.mcp.p95)} ${ms(r.mcp.p99)} |${ms(r.chrono.p50)} ${ms(r.chrono.p95)} ${ms(r.chrono.p99)}`,
    );
    if (r.mcpCompared !== undefined)
      console.log(`${" ".repeat(34)}MCP via ${compareGateway}: ${ms(r.mcpCompared.p50)} ${ms(r.mcpCompared.p95)} ${ms(r.mcpCompared.p99)}`);
  }
  for (const r of results) if (r.layers !== undefined) printLayers(r.n, r.layers, queryCount);
  return 0;
}

/** Each layer's percentiles and what its p50 adds to the one below it. */
function printLayers(n: number, layers: Record<Layer, Percentiles>, rounds: number): void {
  console.log(`\nlayers at ${n} memories (${rounds} rounds, one query per layer in turn)`);
  console.log("layer          p50     p95     p99 | p50 added (ms)");
  LAYERS.forEach((layer, i) => {
    const below = i === 0 ? 0 : layers[LAYERS[i - 1]!].p50;
    const { p50, p95, p99 } = layers[layer];
    console.log(`${layer.padEnd(11)}${ms(p50)} ${ms(p95)} ${ms(p99)} |${ms(p50 - below)}`);
  });
}

/** A table cell: milliseconds to a tenth, right-aligned. */
function ms(value: number): string {
  return value.toFixed(1).padStart(7);
}
