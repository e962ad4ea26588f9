/**
 * The embedding retry end to end: real memory service over gRPC, real PostgreSQL, real Redis,
 * and a consolidator wired exactly as in production (Redis backend, gRPC client and embedder all
 * built from its config). Outcomes are read from the database, the queue and /metrics.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toVectorLiteral } from "@3ngram/db";
import { HashingEmbedder } from "@3ngram/embeddings";
import { createRedisQueueBackend, type QueueBackend, type QueueCounts } from "@3ngram/queue";
import { MemoryType } from "@3ngram/proto/common/v1/memory";
import { EmbeddingState } from "@3ngram/proto/memory/v1";
import { SCOPES } from "@3ngram/rpc";
import { createLogger, loadConfig } from "@3ngram/runtime";
import { EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB, EMBED_RETRY_POLICY } from "@3ngram/schema";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { TEST_REDIS_URL, deleteKeyPrefix } from "../../../../test/support/database.js";
import { freePort } from "../../../../test/support/processes.js";
import { consolidatorConfigSchema, startConsolidator, type Consolidator } from "../../src/index.js";
import { BACKFILL_TENANT_JOB } from "../../src/jobs/backfill-tenant.js";
import { eventually } from "../../../../test/support/processes.js";

type Tenant = { tenantId: string; userId: string };

let stack: CoreServices;
let consolidator: Consolidator;
let producer: QueueBackend;
let metricsPort: number;
let tenantA: Tenant;
let tenantB: Tenant;

const writer = (t: Tenant) => ({ identity: { tenantId: t.tenantId, userId: t.userId, scopes: [SCOPES.read, SCOPES.write] } });
const idle: QueueCounts = { waiting: 0, active: 0, delayed: 0, failed: 0 };

beforeAll(async () => {
  // No embedder in the memory service: inline embedding is off, so every memory is stored
  // pending and the memory service queues the retry job itself.
  stack = await startCoreServices({ label: "consolidator", embedder: null });
  tenantA = await stack.createTenant("tenant a");
  tenantB = await stack.createTenant("tenant b");
  metricsPort = await freePort();
  const config = loadConfig(consolidatorConfigSchema, {
    SERVICE_SIGNING_JWK: stack.keys.signingJwk,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: stack.redisPrefix,
    MEMORY_ADDR: stack.memoryAddress,
    METRICS_PORT: String(metricsPort),
    EMBEDDINGS_PROVIDER: "hashing",
    EMBEDDINGS_DIMENSIONS: "512",
  });
  const log = createLogger({ service: "consolidator", level: process.env.TEST_LOG_LEVEL ?? "silent" });
  consolidator = await startConsolidator(config, { log });
  // Every start runs the embedding backfill once; it finds nothing for either tenant. Waiting for it
  // keeps it from embedding a memory that the tests below leave to the retry job.
  await eventually(async () => expect(await jobsTotal("nothing_pending", BACKFILL_TENANT_JOB)).toBe(2));
  // The test's own producer on the same key prefix, to queue extra jobs and read counts.
  producer = createRedisQueueBackend({ redisUrl: TEST_REDIS_URL, prefix: stack.redisPrefix });
});

afterAll(async () => {
  await consolidator?.close();
  await producer?.close();
  await stack?.close();
  if (stack) await deleteKeyPrefix(stack.redisPrefix);
});

describe("embed-memory job against the real memory service", () => {
  let memoryId: string;
  const topic = "storage";
  const content = "Memories live in PostgreSQL; vectors in pgvector.";

  it("embeds a memory that was stored pending", async () => {
    const memory = await stack.memoryClient();
    const stored = await memory.memories.remember({ memoryType: MemoryType.DECISION, topic, content }, writer(tenantA));
    expect(stored.embedded).toBe(EmbeddingState.PENDING);
    memoryId = stored.memory!.id;

    await eventually(async () => {
      const read = await memory.memories.getMemories({ ids: [memoryId] }, writer(tenantA));
      expect(read.memories[0]?.embedded).toBe(EmbeddingState.DONE);
    });
    await eventually(async () => expect(await producer.counts(EMBEDDINGS_QUEUE)).toEqual(idle));

    const [expected] = await new HashingEmbedder({ dimensions: 512 }).embed([`${topic}\n${content}`]);
    const { rows } = await stack.ownerPool.query<{ embedding_model: string; embedding_dim: number; similarity: number }>(
      `SELECT embedding_model, embedding_dim, 1 - (embedding <=> $2::vector) AS similarity FROM memories WHERE id = $1`,
      [memoryId, toVectorLiteral(expected!)],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ embedding_model: "hashing-512", embedding_dim: 512 });
    expect(rows[0]!.similarity).toBeGreaterThan(0.9999);
    expect(await embedDoneEvents(memoryId)).toBe(1);
    expect(await jobsTotal("embedded")).toBe(1);
  });

  it("does nothing when the same job runs again", async () => {
    await producer.queue.enqueue(EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB, { tenantId: tenantA.tenantId, memoryId }, { jobId: `embed-${memoryId}` });
    await eventually(async () => expect(await jobsTotal("already_embedded")).toBe(1));
    await eventually(async () => expect(await producer.counts(EMBEDDINGS_QUEUE)).toEqual(idle));
    expect(await embedDoneEvents(memoryId)).toBe(1);
  });

  it("finishes without touching the memory when the job names another tenant", async () => {
    await producer.queue.enqueue(EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB, { tenantId: tenantB.tenantId, memoryId }, { retry: EMBED_RETRY_POLICY });
    await eventually(async () => expect(await jobsTotal("not_found")).toBe(1));
    await eventually(async () => expect(await producer.counts(EMBEDDINGS_QUEUE)).toEqual(idle));
    expect(await embedDoneEvents(memoryId)).toBe(1);
  });

  it("dead-letters a malformed payload at once, without retrying", async () => {
    await producer.queue.enqueue(EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB, { tenantId: tenantA.tenantId }, { retry: EMBED_RETRY_POLICY });
    await eventually(async () => expect(await producer.counts(EMBEDDINGS_QUEUE)).toEqual({ ...idle, failed: 1 }));
    expect(await jobsTotal("failed_permanent")).toBe(1);
    expect(await jobsTotal("failed_retryable")).toBe(0);
  });
});

async function embedDoneEvents(memoryId: string): Promise<number> {
  const { rows } = await stack.ownerPool.query<{ n: string }>("SELECT count(*) AS n FROM memory_events WHERE memory_id = $1 AND event_kind = 'embed_done'", [
    memoryId,
  ]);
  return Number(rows[0]!.n);
}

/** The consolidator's own count of attempts of `job` (embed-memory unless named) with this outcome, from /metrics. */
async function jobsTotal(outcome: string, job: string = EMBED_MEMORY_JOB): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const line = text
    .split("\n")
    .find((l) => l.startsWith("threengram_consolidator_jobs_total{") && l.includes(`job="${job}"`) && l.includes(`outcome="${outcome}"`));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
}
