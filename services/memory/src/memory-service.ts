import { assertRoleRespectsRls, createPool, ping, type Pool } from "@3ngram/db";
import { createEmbedder, defaultServiceWorkers, type Embedder } from "@3ngram/embeddings";
import { createRedisQueueBackend, type DeadLetterCounts, type JobQueue, type QueueCounts } from "@3ngram/queue";
import { CredentialVerifier, RpcServer } from "@3ngram/rpc";
import { createLogger, createMetricsRegistry, serveMetrics, type Logger } from "@3ngram/runtime";
import type { MemoryConfig } from "./config.js";
import { migrate } from "./db/migrate.js";
import { OutboxRelay } from "./relay/outbox-relay.js";
import { addMemoryServices } from "./grpc/memory-service.js";

export interface MemoryServiceDeps {
  pool?: Pool;
  embedder?: Embedder | null;
  queue?: JobQueue;
  /** The injected queue's counts and dead letters (standalone passes its in-process backend's), for describe_environment. */
  queueCounts?: (queue: string) => Promise<QueueCounts>;
  deadLetters?: (queue: string) => Promise<DeadLetterCounts>;
  log?: Logger;
}

export interface RunningMemoryService {
  port: number;
  address: string;
  pool: Pool;
  close(): Promise<void>;
}

/** How often health re-checks the database: short, so SERVING returns within seconds of it. */
const HEALTH_INTERVAL_MS = 2_000;

/**
 * Boots the memory service: migrations (unless disabled), the RLS guard on the runtime role,
 * then the gRPC server. Injected deps let standalone mode share one embedder, an in-process queue
 * and the embedded database; anything not injected is built from config and closed with the service.
 */
export async function startMemoryService(config: MemoryConfig, deps: MemoryServiceDeps = {}): Promise<RunningMemoryService> {
  const log = deps.log ?? createLogger({ service: "memory", level: config.LOG_LEVEL });
  const closers: Array<() => Promise<void>> = [];
  const pool = deps.pool ?? createPool({ connectionString: config.DATABASE_URL, max: config.DATABASE_POOL_MAX, applicationName: "3ngram-memory" });
  if (!deps.pool) closers.push(() => pool.end());

  try {
    if (config.MIGRATE_ON_START) {
      const result = await migrate(pool);
      log.info({ applied: result.applied }, "migrations done");
    }
    await assertRoleRespectsRls(pool, config.RUNTIME_DB_ROLE);

    const embedder = deps.embedder !== undefined ? deps.embedder : await createEmbedder(config.embeddings, { defaultWorkers: defaultServiceWorkers() });
    if (deps.embedder === undefined && embedder?.close) closers.push(() => embedder.close!());
    let queue = deps.queue;
    let queueCounts = deps.queueCounts;
    let deadLetters = deps.deadLetters;
    if (!queue) {
      const backend = createRedisQueueBackend({ redisUrl: config.REDIS_URL, prefix: config.REDIS_KEY_PREFIX });
      queue = backend.queue;
      queueCounts = backend.counts;
      deadLetters = backend.deadLetters;
      closers.push(() => backend.close());
    }

    const registry = createMetricsRegistry("memory");
    // Moves the jobs writes record in the outbox onto the queue; closed before the queue and pool.
    const relay = new OutboxRelay({ pool, role: config.RUNTIME_DB_ROLE, queue, log, registry });
    relay.start();
    closers.unshift(() => relay.close());
    const server = new RpcServer({
      name: "memory",
      verifier: new CredentialVerifier("memory", config.SERVICE_TRUSTED_JWKS),
      log,
      registry,
      // Every request fits gRPC's default 4 MiB: an import arrives as a stream of pieces.
      maxConnectionAgeMs: config.GRPC_MAX_CONNECTION_AGE_MS,
    });
    addMemoryServices(server, {
      pool,
      runtimeRole: config.RUNTIME_DB_ROLE,
      embedder,
      jobsRecorded: () => relay.kick(),
      ...(queueCounts ? { queueCounts } : {}),
      ...(deadLetters ? { deadLetters } : {}),
      inlineEmbedBudgetMs: config.EMBED_INLINE_BUDGET_MS,
      log,
    });
    const port = await server.listen(`${config.GRPC_HOST}:${config.GRPC_PORT}`);
    server.setServing(true);
    // Health follows the database: NOT_SERVING while it is unreachable, so callers route around us.
    const stopHealth = server.followDependency(() => ping(pool), HEALTH_INTERVAL_MS);
    closers.unshift(async () => {
      stopHealth();
      await server.shutdown();
    });

    if (config.METRICS_PORT > 0) {
      const metrics = await serveMetrics(registry, config.METRICS_PORT);
      closers.push(() => new Promise<void>((resolve) => metrics.close(() => resolve())));
    }
    log.info({ port }, "memory service listening");
    return {
      port,
      address: `127.0.0.1:${port}`,
      pool,
      async close() {
        for (const close of closers) await close();
      },
    };
  } catch (err) {
    for (const close of closers) await close().catch(() => {});
    throw err;
  }
}
