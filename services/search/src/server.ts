import { SearchService } from "@3ngram/proto/search/v1";
import { assertRoleRespectsRls, createPool, ping, type Pool } from "@3ngram/db";
import { createEmbedder, defaultServiceWorkers, type Embedder } from "@3ngram/embeddings";
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

/** How often health re-checks the database: short, so SERVING returns within seconds of it. */
const HEALTH_INTERVAL_MS = 2_000;

/** Boots the search service. It only reads: its role has SELECT and nothing else. */
export async function startSearchService(config: SearchConfig, deps: SearchServiceDeps = {}): Promise<RunningSearchService> {
  const log = deps.log ?? createLogger({ service: "search", level: config.logLevel });
  // What is passed in stays open on close: its owner closes it.
  return composeService(async (defer) => {
    const pool = deps.pool ?? createPool({ connectionString: config.databaseUrl, max: config.databasePoolMax, applicationName: "3ngram-search" });
    if (!deps.pool) defer(() => pool.end());
    await assertRoleRespectsRls(pool, config.dbRole);
    const embedder = deps.embedder !== undefined ? deps.embedder : await createEmbedder(config.embeddings, { defaultWorkers: defaultServiceWorkers() });
    if (deps.embedder === undefined && embedder?.close) defer(() => embedder.close!());
    // A model of our own starts loading now, beside the rest of the start, and searches do not wait
    // for it (model-warmup.ts); one passed in is its owner's to load.
    const modelReady = deps.embedder === undefined ? warmModel(embedder, log) : undefined;
    const registry = createMetricsRegistry("search");
    // Served before the gRPC server listens, so the server is the first thing a close stops.
    if (config.metricsPort > 0) {
      const metrics = await serveMetrics(registry, config.metricsPort);
      defer(() => new Promise<void>((resolve) => metrics.close(() => resolve())));
    }
    // The model whose stored vectors this service compares with (none without a model).
    const embedding = embedder ? { model: embedder.model, dimensions: embedder.dimensions } : null;
    const vectorIndex = config.vectorIndex === "memory" && embedder ? await startVectorIndex(config, { pool, log, registry }) : undefined;
    const server = new RpcServer({
      name: "search",
      verifier: new CredentialVerifier("search", config.trustedJwks),
      log,
      registry,
      maxConnectionAgeMs: config.grpcMaxConnectionAgeMs,
    });
    server.addService(
      SearchService,
      {
        ...searchHandlers({
          pool,
          role: config.dbRole,
          queryEmbedder: new QueryEmbedder({
            embedder,
            budgetMs: config.queryEmbedBudgetMs,
            cacheSize: config.queryEmbedCacheSize,
            log,
            registry,
            ...(modelReady ? { modelReady } : {}),
          }),
          termCounts: new TermCountCache({ maxEntries: config.termCacheSize, ttlMs: config.termCacheTtlMs, registry }),
          ...(vectorIndex ? { vectorIndex } : {}),
          ...(deps.policy ? { policy: deps.policy } : {}),
          log,
        }),
        ...similarPairsHandlers({
          pool,
          role: config.dbRole,
          embedding,
          log,
        }),
      },
      { ...searchPolicies, ...similarPairsPolicies },
    );
    const port = await server.listen(`${config.grpcHost}:${config.grpcPort}`);
    server.setServing(true);
    // Health follows the database: NOT_SERVING while it is unreachable, so callers route around us.
    const stopHealth = server.followDependency(() => ping(pool), HEALTH_INTERVAL_MS);
    defer(async () => {
      stopHealth();
      await server.shutdown();
    });
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
      role: config.dbRole,
      scan,
      maxVectors: config.vectorIndexMaxVectors,
      log: deps.log,
      registry: deps.registry,
    });
  } catch (err) {
    deps.log.warn({ error: (err as Error).name }, "the in-process vector index cannot load its scan on this platform; searches use the database's index");
    return undefined;
  }
}
