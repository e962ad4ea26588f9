import { SearchService } from "@3ngram/proto/search/v1";
import { assertRoleRespectsRls, givenOrNewPool, ping, type Pool } from "@3ngram/db";
import { givenOrNewEmbedder, type Embedder } from "@3ngram/embeddings";
import { CredentialVerifier, RpcServer } from "@3ngram/rpc";
import { composeService, createLogger, createMetricsRegistry, serveMetrics, type Logger } from "@3ngram/runtime";
import type { Registry } from "prom-client";
import type { SearchConfig } from "./config.js";
import type { SearchPolicy } from "./domain/policy.js";
import { TermCountCache } from "./in-process/term-counts.js";
import { QueryEmbedder } from "./in-process/query-embedder.js";
import { warmModel } from "./in-process/model-warmup.js";
import { loadExactScan } from "./in-process/exact-scan.js";
import { VectorIndex } from "./in-process/vector-index.js";
import { searchHandlers, searchPolicies } from "./grpc/search-handlers.js";
import { similarPairsHandlers, similarPairsPolicies } from "./grpc/similar-pairs-handlers.js";

export interface SearchServiceDeps {
  pool?: Pool;
  embedder?: Embedder | null;
  log?: Logger;
  /** Ranking numbers for calibration runs; the policy module's SEARCH_POLICY otherwise. */
  policy?: SearchPolicy;
}

export interface RunningSearchService {
  port: number;
  address: string;
  /** The service's metrics (also served on METRICS_PORT when set). */
  registry: Registry;
  /**
   * Loads a tenant's vectors of this service's model into the in-process vector index now, so its
   * first searches after a start do not run on the database's index behind the load (standalone
   * does this for its one tenant). Answers whether that tenant's searches will use the in-process
   * index: false without one (SEARCH_VECTOR_INDEX=database, or no model), or when it is too large.
   */
  warmVectors(tenantId: string): Promise<boolean>;
  close(): Promise<void>;
}

/** Boots the search service. It only reads: its role has SELECT and nothing else. */
export async function startSearchService(config: SearchConfig, deps: SearchServiceDeps = {}): Promise<RunningSearchService> {
  const log = deps.log ?? createLogger({ service: "search", level: config.logLevel });
  // What is passed in stays open on close: its owner closes it.
  return composeService(async (defer) => {
    const pool = givenOrNewPool(deps.pool, { connectionString: config.databaseUrl, max: config.databasePoolMax, applicationName: "3ngram-search" }, defer);
    await assertRoleRespectsRls(pool, config.searchDbRole);
    const embedder = await givenOrNewEmbedder(deps.embedder, config.embeddings, defer);
    // A model of our own starts loading now, beside the rest of the start, and searches do not wait
    // for it (model-warmup.ts); one passed in is its owner's to load.
    const modelReady = deps.embedder === undefined ? warmModel(embedder, log) : undefined;
    const registry = createMetricsRegistry("search");
    // Served before the gRPC server listens, so the server is the first thing a close stops.
    await serveMetrics(registry, config.metricsPort, defer);
    // The model whose stored vectors this service compares with (none without a model).
    const embedding = embedder ? { model: embedder.model, dimensions: embedder.dimensions } : null;
    const vectorIndex = config.searchVectorIndex === "memory" && embedder ? await startVectorIndex(config, { pool, log, registry }) : undefined;
    const server = new RpcServer({
      name: "search",
      verifier: new CredentialVerifier("search", config.serviceTrustedJwks),
      log,
      registry,
      maxConnectionAgeMs: config.grpcMaxConnectionAgeMs,
    });
    server.addService(
      SearchService,
      {
        ...searchHandlers({
          pool,
          role: config.searchDbRole,
          queryEmbedder: new QueryEmbedder({
            embedder,
            budgetMs: config.queryEmbedBudgetMs,
            cacheSize: config.queryEmbedCacheSize,
            log,
            registry,
            ...(modelReady ? { modelReady } : {}),
          }),
          termCounts: new TermCountCache({ maxEntries: config.searchTermCacheSize, ttlMs: config.searchTermCacheTtlMs, registry }),
          ...(vectorIndex ? { vectorIndex } : {}),
          ...(deps.policy ? { policy: deps.policy } : {}),
          log,
        }),
        ...similarPairsHandlers({
          pool,
          role: config.searchDbRole,
          embedding,
          log,
        }),
      },
      { ...searchPolicies, ...similarPairsPolicies },
    );
    // Health follows the database: NOT_SERVING while it is unreachable, so callers route around us.
    const port = await server.serveWhile(`${config.grpcHost}:${config.grpcPort}`, () => ping(pool), defer);
    log.info({ port }, "search service listening");
    return {
      port,
      address: `127.0.0.1:${port}`,
      registry,
      async warmVectors(tenantId: string) {
        if (!vectorIndex || !embedding) return false;
        return vectorIndex.warm({ tenantId, ...embedding });
      },
    };
  });
}

/** The in-process vector index, or none (with a warning) where its native scan cannot load: searches then use the database's index. */
async function startVectorIndex(config: SearchConfig, deps: { pool: Pool; log: Logger; registry: Registry }): Promise<VectorIndex | undefined> {
  try {
    const scan = await loadExactScan();
    return new VectorIndex({
      pool: deps.pool,
      role: config.searchDbRole,
      scan,
      maxVectors: config.searchVectorIndexMaxVectors,
      log: deps.log,
      registry: deps.registry,
    });
  } catch (err) {
    deps.log.warn({ error: (err as Error).name }, "the in-process vector index cannot load its scan on this platform; searches use the database's index");
    return undefined;
  }
}
