/**
 * What the consolidator tests share: the real memory service (test/support/core-services.ts),
 * peers connected the way the consolidator connects them, and reads of what the database recorded.
 * Nothing here stands in for a service; failures are produced by real components (a port nothing
 * listens on, a key the service does not trust, a memory service started late).
 */
import { toVectorLiteral } from "@3ngram/db";
import { loadMemoryConfig, startMemoryService, type RunningMemoryService } from "@3ngram/memory";
import { MemoryType } from "@3ngram/proto/common/v1/memory";
import { EmbeddingState, memoryServices } from "@3ngram/proto/memory/v1";
import { createMemoryQueueBackend, type JobQueue, type QueueBackend } from "@3ngram/queue";
import { CredentialSigner, SCOPES, generateServiceKeyPair, type RpcClients } from "@3ngram/rpc";
import { RulesFactExtractor, type FactExtractor } from "../src/extraction/index.js";
import { connectMemory, connectSearch, type MemoryPeer, type SearchPeer } from "../src/peers.js";
import { createLogger } from "@3ngram/runtime";
import type { CoreServices } from "../../../test/support/core-services.js";
import { TEST_REDIS_URL } from "../../../test/support/database.js";
import { freePort } from "../../../test/support/processes.js";
import { eventually } from "../../../test/support/processes.js";
export { eventually };

/** A raw client, proto messages in and out: the user side of a test, never handed to the consolidator. */
export type MemoryRpc = RpcClients<typeof memoryServices>;
export interface Tenant {
  tenantId: string;
  userId: string;
}

export const silentLog = createLogger({ service: "consolidator-test", level: process.env.TEST_LOG_LEVEL ?? "silent" });

/** A memory peer as the consolidator connects it (issuer "consolidator"), at `address` (default: the running service). */
export async function consolidatorClient(stack: CoreServices, address: string = stack.memoryAddress): Promise<MemoryPeer> {
  return connectMemory(address, await stack.keys.signer("consolidator"));
}

/**
 * The job dependencies besides the memory client and the embedder: a search client of the stack,
 * the rules extractor, an in-process queue for fan-out (and its dead letters), and no commitment
 * grace. Close with `close`.
 */
export async function otherJobDeps(stack: CoreServices): Promise<{
  search: SearchPeer;
  extractor: FactExtractor;
  queue: JobQueue;
  deadLetters: Pick<QueueBackend, "redrive">;
  commitmentGraceMs: number;
  oauthClientIdleDays: number;
  close(): Promise<void>;
}> {
  const search = connectSearch(stack.searchAddress, await stack.keys.signer("consolidator"));
  const backend = createMemoryQueueBackend();
  return {
    search,
    extractor: new RulesFactExtractor(),
    queue: backend.queue,
    deadLetters: backend,
    commitmentGraceMs: 0,
    oauthClientIdleDays: 30,
    async close() {
      search.close();
      await backend.close();
    },
  };
}

/** A peer at a port nothing listens on: every call fails at the transport, as unavailable. */
export async function unreachableClient(stack: CoreServices): Promise<MemoryPeer> {
  return consolidatorClient(stack, `127.0.0.1:${await freePort()}`);
}

/** A peer of the running service whose credentials are signed with a key the service does not trust. */
export async function untrustedClient(stack: CoreServices): Promise<MemoryPeer> {
  const { privateJwk } = await generateServiceKeyPair("not-trusted");
  return connectMemory(stack.memoryAddress, await CredentialSigner.fromJwk("consolidator", privateJwk));
}

/**
 * Another instance of the real memory service on the same database and key prefix, listening on
 * `port`: what a client pointed at `port` sees when the service comes (back) up.
 */
export async function startMemoryOn(stack: CoreServices, port: number): Promise<RunningMemoryService> {
  const config = loadMemoryConfig({
    DATABASE_URL: stack.db.url,
    SERVICE_TRUSTED_JWKS: stack.keys.trustedJwks,
    GRPC_HOST: "127.0.0.1",
    GRPC_PORT: String(port),
    METRICS_PORT: "0",
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: stack.redisPrefix,
    // The first instance migrated this database already.
    MIGRATE_ON_START: "false",
    EMBEDDINGS_PROVIDER: "hashing",
    LOG_LEVEL: "silent",
  });
  return startMemoryService(config, { embedder: null, log: silentLog });
}

const writer = (t: Tenant) => ({ identity: { tenantId: t.tenantId, userId: t.userId, scopes: [SCOPES.read, SCOPES.write] } });

/** One user-side client per stack (signed as the gateway signs); the stack closes it. */
const userClients = new WeakMap<CoreServices, Promise<MemoryRpc>>();
function userClient(stack: CoreServices): Promise<MemoryRpc> {
  let client = userClients.get(stack);
  if (!client) {
    client = stack.memoryClient();
    userClients.set(stack, client);
  }
  return client;
}

/** Stores a memory through the real remember RPC. The stack must run without an embedder, so it is stored pending. */
export async function storePending(stack: CoreServices, tenant: Tenant, fields: { topic: string; content: string }): Promise<string> {
  const memory = await userClient(stack);
  const stored = await memory.memories.remember({ memoryType: MemoryType.DECISION, ...fields }, writer(tenant));
  if (stored.embedded !== EmbeddingState.PENDING || !stored.memory) throw new Error(`expected a pending memory, got embedded=${stored.embedded}`);
  return stored.memory.id;
}

/** The memory's embedding state as its tenant reads it, or "not_found". */
export async function embeddingState(stack: CoreServices, tenant: Tenant, memoryId: string): Promise<string> {
  const memory = await userClient(stack);
  const read = await memory.memories.getMemories({ ids: [memoryId] }, writer(tenant));
  const state = read.memories[0]?.embedded;
  return state === undefined ? "not_found" : EmbeddingState[state].toLowerCase();
}

/** The stored vector's model and size, and its cosine similarity to `expected`. */
export async function storedEmbedding(
  stack: CoreServices,
  memoryId: string,
  expected: readonly number[],
): Promise<{ model: string | null; dimensions: number | null; similarity: number | null } | undefined> {
  const { rows } = await stack.ownerPool.query<{ model: string | null; dimensions: number | null; similarity: number | null }>(
    `SELECT embedding_model AS model, embedding_dim AS dimensions,
            CASE WHEN embedding_dim = $3 THEN 1 - (embedding <=> $2::vector) END AS similarity
       FROM memories WHERE id = $1`,
    [memoryId, toVectorLiteral(expected), expected.length],
  );
  return rows[0];
}

/** The embed_done audit events of one memory. */
export async function embedDoneEvents(stack: CoreServices, memoryId: string): Promise<{ tenantId: string; actor: string; payload: unknown }[]> {
  const { rows } = await stack.ownerPool.query<{ tenantId: string; actor: string; payload: unknown }>(
    `SELECT tenant_id AS "tenantId", actor_kind AS actor, payload FROM memory_events
      WHERE memory_id = $1 AND event_kind = 'embed_done' ORDER BY created_at`,
    [memoryId],
  );
  return rows;
}

/** What an operator's erasure does (the runtime role can never delete): the memory and its events are gone. */
export async function eraseMemory(stack: CoreServices, memoryId: string): Promise<void> {
  await stack.ownerPool.query("DELETE FROM memory_events WHERE memory_id = $1", [memoryId]);
  await stack.ownerPool.query("DELETE FROM memories WHERE id = $1", [memoryId]);
}
