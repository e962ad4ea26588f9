import { memoryServices } from "@3ngram/proto/memory/v1";
import { SearchService } from "@3ngram/proto/search/v1";
import { createPool, type Pool } from "@3ngram/db";
import { HashingEmbedder, type Embedder } from "@3ngram/embeddings";
import { createMemoryService } from "./memory-service-factory.js";
import { bridgeClient, connectPeer, createRpcClient, createRpcClients, type BridgedClient, type Peer, type RpcClient, type RpcClients } from "@3ngram/rpc";
import { memoryContracts, searchContract } from "@3ngram/schema";
import { createLogger } from "@3ngram/runtime";
import { SEARCH_POLICY, loadSearchConfig, startSearchService, type RunningSearchService, type SearchPolicy } from "@3ngram/search";
import { createTestDatabase, deleteKeyPrefix, uniqueKeyPrefix, TEST_REDIS_URL, type TestDatabase } from "./database.js";
import { createTestKeys, type TestKeys } from "./keys.js";

export interface CoreServices {
  db: TestDatabase;
  keys: TestKeys;
  /** Owner-role pool for assertions that must see past row-level security. */
  ownerPool: Pool;
  memoryAddress: string;
  searchAddress: string;
  redisPrefix: string;
  /** Raw clients, proto messages in and out as a foreign client in any language sees them: every memory.v1 service over one channel. */
  memoryClient(): Promise<RpcClients<typeof memoryServices>>;
  searchClient(): Promise<RpcClient<typeof SearchService>>;
  /** Clients speaking the public shapes through the bridge; the memory one is a peer, as the gateway and the consolidator hold it. */
  publicMemoryClient(): Promise<PublicMemoryClient>;
  publicSearchClient(): Promise<PublicSearchClient>;
  /** A client of a second search service on the same database, ranking with `policy` over the default one. */
  searchClientWithPolicy(policy: Partial<SearchPolicy>): Promise<RpcClient<typeof SearchService>>;
  /**
   * Another search service on the same database (closed with the stack) and a raw client of it:
   * the stack's embedder unless given one, extra settings in `env` (e.g. SEARCH_VECTOR_INDEX).
   */
  extraSearchService(options?: ExtraSearchOptions): Promise<{ service: RunningSearchService; client: RpcClient<typeof SearchService> }>;
  createTenant(name: string): Promise<{ tenantId: string; userId: string; apiKey: string }>;
  close(): Promise<void>;
}

export type PublicMemoryClient = Peer<typeof memoryServices, typeof memoryContracts>;
export type PublicSearchClient = BridgedClient<typeof SearchService, typeof searchContract>;

interface ExtraSearchOptions {
  env?: Record<string, string>;
  embedder?: Embedder | null;
  policy?: Partial<SearchPolicy>;
}

export interface CoreServicesOptions {
  label: string;
  embedder?: Embedder | null;
  inlineEmbedBudgetMs?: number;
}

/**
 * Real memory and search services on loopback gRPC against a fresh PostgreSQL database and a
 * unique Redis key prefix. Tests call them with real clients; nothing is mocked.
 */
export async function startCoreServices(options: CoreServicesOptions): Promise<CoreServices> {
  const db = await createTestDatabase(options.label);
  const keys = await createTestKeys();
  const redisPrefix = uniqueKeyPrefix(options.label);
  const embedder = options.embedder === undefined ? new HashingEmbedder({ dimensions: 512 }) : options.embedder;
  const log = createLogger({ service: "test", level: process.env.TEST_LOG_LEVEL ?? "silent" });
  const { memory, search, createTenant } = await createMemoryService({
    databaseUrl: db.url,
    trustedJwks: keys.trustedJwks,
    redisUrl: TEST_REDIS_URL,
    redisPrefix,
    embedder,
    inlineEmbedBudgetMs: options.inlineEmbedBudgetMs ?? 2_000,
    log,
  });
  const ownerPool = createPool({ connectionString: db.url, max: 2, applicationName: "3ngram-test-owner" });
  const clients: Array<{ close(): void }> = [];
  const extraServices: Array<{ close(): Promise<void> }> = [];
  const memoryClient = async () => {
    const client = createRpcClients(memoryServices, { address: memory.address, audience: "memory", signer: await keys.signer("gateway") });
    clients.push(client);
    return client;
  };
  const searchClient = async () => {
    const client = createRpcClient(SearchService, { address: search.address, audience: "search", signer: await keys.signer("gateway") });
    clients.push(client);
    return client;
  };
  const extraSearchService = async (options: ExtraSearchOptions = {}) => {
    const config = loadSearchConfig({
      DATABASE_URL: db.url,
      SERVICE_TRUSTED_JWKS: keys.trustedJwks,
      GRPC_HOST: "127.0.0.1",
      GRPC_PORT: "0",
      METRICS_PORT: "0",
      EMBEDDINGS_PROVIDER: "hashing",
      ...options.env,
    });
    const service = await startSearchService(config, {
      embedder: options.embedder !== undefined ? options.embedder : embedder,
      log,
      ...(options.policy ? { policy: { ...SEARCH_POLICY, ...options.policy } } : {}),
    });
    extraServices.push(service);
    const client = createRpcClient(SearchService, { address: service.address, audience: "search", signer: await keys.signer("gateway") });
    clients.push(client);
    return { service, client };
  };
  return {
    db,
    keys,
    ownerPool,
    memoryAddress: memory.address,
    searchAddress: search.address,
    redisPrefix,
    memoryClient,
    searchClient,
    async publicMemoryClient() {
      const peer = connectPeer(memoryServices, memoryContracts, { address: memory.address, audience: "memory", signer: await keys.signer("gateway") });
      clients.push(peer);
      return peer;
    },
    publicSearchClient: async () => bridgeClient(SearchService, searchContract, await searchClient()),
    async searchClientWithPolicy(policy) {
      return (await extraSearchService({ policy })).client;
    },
    extraSearchService,
    createTenant: (name) => createTenant(name),
    async close() {
      for (const c of clients) c.close();
      for (const s of extraServices) await s.close();
      await search.close();
      await memory.close();
      await ownerPool.end();
      await db.drop();
      await deleteKeyPrefix(redisPrefix);
    },
  };
}
