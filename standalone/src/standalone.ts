import { resolve, join } from "node:path";
import { consolidatorConfigSchema, startConsolidator } from "@3ngram/consolidator";
import { createEmbedder, parseEmbeddingsConfig } from "@3ngram/embeddings";
import { gatewayConfigSchema, startGateway } from "@3ngram/gateway";
import { createTenantWithKey, loadMemoryConfig, startMemoryService } from "@3ngram/memory";
import { createMemoryQueueBackend } from "@3ngram/queue";
import { generateServiceKeyPair } from "@3ngram/rpc";
import { composeService, createLogger, loadConfig, type Env } from "@3ngram/runtime";
import { loadSearchConfig, startSearchService } from "@3ngram/search";
import { lockDataDir, readIdentity, readOrCreateDbPassword, writeDatabaseUrl, writeIdentity, type StandaloneIdentity } from "./data-dir.js";
import { startEmbeddedPostgres } from "./db/embedded-postgres.js";
import { startUpkeep } from "./db/upkeep.js";
import { startHeapCompaction } from "./heap-compaction.js";
import { startMallocTrim } from "./malloc-trim.js";
import { limitOldGenerationGrowth } from "./v8-heap-sizing.js";

export interface StandaloneOptions {
  /** Where the database and the owner's key live (default ./data). */
  dataDir: string;
  /** Gateway port (default 8080; 0 picks a free one). */
  port: number;
  host: string;
  /** Also open the database on this loopback port for tools, behind a password (0: any free port; default: no port). */
  dbPort?: number | undefined;
  logLevel: string;
  /** The rest of the environment: embeddings provider, allowed origins, … */
  env: Env;
}

export interface RunningStandalone {
  url: string;
  mcpUrl: string;
  /** The review web UI (sign in with the API key). */
  uiUrl: string;
  identity: StandaloneIdentity;
  /**
   * The embedded database's Unix socket (only this user can reach it), for the operator commands
   * (`npm run admin -w services/memory`) and other tools while it runs.
   */
  databaseUrl: string;
  /** With a dbPort: the tool port's URL (no password in it) and the file holding its password. */
  dbTools?: { url: string; passwordFile: string };
  /** The data directory in use, as an absolute path (what THREENGRAM_DATA_DIR, or ./data, resolved to). */
  dataDir: string;
  close(): Promise<void>;
}

/**
 * All four services in one process, connected by real gRPC on loopback, over an embedded
 * PostgreSQL (PGlite + pgvector) and an in-process job queue. Service credentials are signed with
 * a key pair generated at each start, so nothing outside this process can call the services.
 */
export async function startStandalone(options: StandaloneOptions): Promise<RunningStandalone> {
  const dataDir = resolve(options.dataDir);
  const log = createLogger({ service: "standalone", level: options.logLevel });
  // Everything opened below is closed in the reverse order, the data directory's lock last.
  return composeService(async (defer) => {
    const unlock = lockDataDir(dataDir);
    defer(unlock);
    // The four services share one JavaScript heap; keep its garbage from holding memory after a burst.
    limitOldGenerationGrowth();
    const compaction = startHeapCompaction();
    defer(() => compaction.close());
    // glibc's arenas keep freed pages resident between live blocks; trim them as memory grows (ADR-0047).
    const mallocTrim = startMallocTrim((err) => log.warn({ err }, "malloc_trim failed; the process keeps the memory it has"));
    defer(() => mallocTrim?.close());
    const socketDir = join(dataDir, "run");
    const dbPassword = options.dbPort === undefined ? undefined : readOrCreateDbPassword(dataDir);
    const postgres = await startEmbeddedPostgres(join(dataDir, "pg"), {
      sharedBuffers: options.env.STANDALONE_SHARED_BUFFERS,
      socketDir,
      toolPort: dbPassword && options.dbPort !== undefined ? { port: options.dbPort, password: dbPassword.password } : undefined,
    });
    defer(() => postgres.close());
    if (postgres.socketDir !== socketDir) {
      log.warn(
        { socketDir: postgres.socketDir },
        `the data directory's path is too long for a Unix socket; the database's socket is in ${postgres.socketDir} instead`,
      );
    }
    const forgetUrl = writeDatabaseUrl(dataDir, postgres.url);
    defer(forgetUrl);
    const keys = await generateServiceKeyPair();
    const embedder = await createEmbedder(parseEmbeddingsConfig(options.env));
    defer(() => embedder.close?.());
    const queues = createMemoryQueueBackend();
    defer(() => queues.close());

    const shared: Env = {
      ...options.env,
      DATABASE_URL: postgres.url,
      DATABASE_POOL_MAX: "4",
      SERVICE_TRUSTED_JWKS: JSON.stringify([keys.publicJwk]),
      SERVICE_SIGNING_JWK: JSON.stringify(keys.privateJwk),
      GRPC_HOST: "127.0.0.1",
      GRPC_PORT: "0",
      METRICS_PORT: "0",
      LOG_LEVEL: options.logLevel,
      // One process holds everything, so the search service scans the tenant's vectors exactly
      // in memory instead of walking the HNSW index inside PGlite (docs/search.md, "The vector leg").
      SEARCH_VECTOR_INDEX: options.env.SEARCH_VECTOR_INDEX ?? "memory",
    };
    const memory = await startMemoryService(loadMemoryConfig(shared), {
      embedder,
      queue: queues.queue,
      queueCounts: queues.counts,
      deadLetters: queues.deadLetters,
      log: log.child({ component: "memory" }),
    });
    defer(() => memory.close());
    const search = await startSearchService(loadSearchConfig(shared), { embedder, log: log.child({ component: "search" }) });
    defer(() => search.close());
    const consolidator = await startConsolidator(
      loadConfig(consolidatorConfigSchema, { ...shared, MEMORY_ADDR: memory.address, SEARCH_ADDR: search.address }),
      {
        backend: queues,
        embedder,
        log: log.child({ component: "consolidator" }),
      },
    );
    defer(() => consolidator.close());

    // After the migrations (the memory service ran them): statistics for what is already stored.
    const upkeep = startUpkeep({ databaseUrl: postgres.url, log: log.child({ component: "upkeep" }) });
    defer(() => upkeep.close());
    await upkeep.runOnce();

    let identity = readIdentity(dataDir);
    if (!identity) {
      const created = await createTenantWithKey(memory.pool, { tenantName: "standalone", keyName: "standalone" });
      identity = { tenantId: created.tenantId, userId: created.userId, apiKey: created.apiKey };
      writeIdentity(dataDir, identity);
      log.info({ tenantId: identity.tenantId }, "created the standalone tenant and its API key");
    }
    // In the background: the owner's first searches after a start then scan vectors already in
    // the search process instead of queueing behind their load (docs/search.md, "The vector leg").
    search.warmVectors(identity.tenantId).catch((err: unknown) => log.warn({ error: (err as Error).name }, "warming the vector index failed"));

    const gatewayConfig = loadConfig(gatewayConfigSchema, {
      ...shared,
      PORT: String(options.port),
      HOST: options.host,
      MEMORY_ADDR: memory.address,
      SEARCH_ADDR: search.address,
      // Standalone counts rate limits in this process, like its queue, even if the shell has a REDIS_URL.
      REDIS_URL: undefined,
    });
    const gateway = await startGateway(gatewayConfig, { log: log.child({ component: "gateway" }) });
    defer(() => gateway.close());
    const url = gateway.url;
    const dbTools = postgres.toolUrl && dbPassword ? { dbTools: { url: postgres.toolUrl, passwordFile: dbPassword.file } } : {};
    return { url, mcpUrl: `${url}/mcp`, uiUrl: `${url}/ui`, identity, databaseUrl: postgres.url, ...dbTools, dataDir };
  });
}
