import { assertRoleRespectsRls, givenOrNewPool, ping, type Pool } from "@3ngram/db";
import { givenOrNewEmbedder, type Embedder } from "@3ngram/embeddings";
import {
  ApiKeysService,
  ArchiveService,
  MaintenanceService,
  MemoriesService,
  OAuthStorageService,
  OrientationService,
  ProposalsService,
  ScopesService,
} from "@3ngram/proto/memory/v1";
import { createRedisQueueBackend, type DeadLetterCounts, type JobQueue, type QueueCounts } from "@3ngram/queue";
import { CredentialVerifier, RpcServer } from "@3ngram/rpc";
import { composeService, createLogger, createMetricsRegistry, serveMetrics, type Defer, type Logger } from "@3ngram/runtime";
import type { MemoryConfig } from "./config.js";
import { migrate } from "./db/migrate.js";
import type { MemoryDeps } from "./domain/deps.js";
import { apiKeyHandlers, apiKeyPolicies } from "./grpc/api-key-handlers.js";
import { archiveHandlers, archivePolicies } from "./grpc/archive-handlers.js";
import { maintenanceHandlers, maintenancePolicies } from "./grpc/maintenance-handlers.js";
import { memoriesHandlers, memoriesPolicies } from "./grpc/memories-handlers.js";
import { oauthHandlers, oauthPolicies } from "./grpc/oauth-handlers.js";
import { orientationHandlers, orientationPolicies } from "./grpc/orientation-handlers.js";
import { proposalHandlers, proposalPolicies } from "./grpc/proposal-handlers.js";
import { scopeHandlers, scopePolicies } from "./grpc/scope-handlers.js";
import { OutboxRelay } from "./relay/outbox-relay.js";

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

/**
 * Boots the memory service: migrations (unless disabled), the RLS guard on the runtime role,
 * then the gRPC server. Injected deps let standalone mode share one embedder, an in-process queue
 * and the embedded database; anything not injected is built from config and closed with the
 * service, in the reverse order it was opened (the server first, the pool last).
 */
export async function startMemoryService(config: MemoryConfig, deps: MemoryServiceDeps = {}): Promise<RunningMemoryService> {
  const log = deps.log ?? createLogger({ service: "memory", level: config.logLevel });
  return composeService(async (defer) => {
    const pool = givenOrNewPool(deps.pool, { connectionString: config.databaseUrl, max: config.databasePoolMax, applicationName: "3ngram-memory" }, defer);
    if (config.migrateOnStart) {
      const result = await migrate(pool);
      log.info({ applied: result.applied }, "migrations done");
    }
    await assertRoleRespectsRls(pool, config.runtimeDbRole);

    const embedder = await givenOrNewEmbedder(deps.embedder, config.embeddings, defer);
    const queues = deps.queue ? { queue: deps.queue, counts: deps.queueCounts, deadLetters: deps.deadLetters } : openRedisQueues(config, defer);

    const registry = createMetricsRegistry("memory");
    await serveMetrics(registry, config.metricsPort, defer);
    // Moves the jobs writes record in the outbox onto the queue; closed before the queue and pool.
    const relay = new OutboxRelay({ pool, role: config.runtimeDbRole, queue: queues.queue, log, registry });
    relay.start();
    defer(() => relay.close());

    const server = new RpcServer({
      name: "memory",
      verifier: new CredentialVerifier("memory", config.serviceTrustedJwks),
      log,
      registry,
      // Every request fits gRPC's default 4 MiB: an import arrives as a stream of pieces.
      maxConnectionAgeMs: config.grpcMaxConnectionAgeMs,
    });
    addMemoryServices(server, {
      pool,
      runtimeRole: config.runtimeDbRole,
      embedder,
      jobsRecorded: () => relay.kick(),
      ...(queues.counts ? { queueCounts: queues.counts } : {}),
      ...(queues.deadLetters ? { deadLetters: queues.deadLetters } : {}),
      inlineEmbedBudgetMs: config.embedInlineBudgetMs,
      log,
    });
    // Health follows the database: NOT_SERVING while it is unreachable, so callers route around us.
    const port = await server.serveWhile(`${config.grpcHost}:${config.grpcPort}`, () => ping(pool), defer);
    log.info({ port }, "memory service listening");
    return { port, address: `127.0.0.1:${port}`, pool };
  });
}

/** The queue on Redis, when none was injected: its counts and dead letters come with it. */
function openRedisQueues(config: MemoryConfig, defer: Defer) {
  const backend = createRedisQueueBackend({ redisUrl: config.redisUrl, prefix: config.redisKeyPrefix });
  defer(() => backend.close());
  return { queue: backend.queue, counts: backend.counts, deadLetters: backend.deadLetters };
}

/** Every memory.v1 service on the one server: each bounded context's handlers and scope policy (docs/adr/0033). */
function addMemoryServices(server: RpcServer, deps: MemoryDeps): void {
  server.addService(MemoriesService, memoriesHandlers(deps), memoriesPolicies);
  server.addService(ScopesService, scopeHandlers(deps), scopePolicies);
  server.addService(OrientationService, orientationHandlers(deps), orientationPolicies);
  server.addService(ProposalsService, proposalHandlers(deps), proposalPolicies);
  server.addService(MaintenanceService, maintenanceHandlers(deps), maintenancePolicies);
  server.addService(ApiKeysService, apiKeyHandlers(deps), apiKeyPolicies);
  server.addService(OAuthStorageService, oauthHandlers(deps), oauthPolicies);
  server.addService(ArchiveService, archiveHandlers(deps), archivePolicies);
}
