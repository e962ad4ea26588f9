/**
 * The transactional outbox: a write records its background jobs in its own transaction, so a
 * queue that cannot be reached delays them without losing them. Here the memory service first
 * runs against a Redis address where nothing listens (writes are acknowledged, jobs pile up in the
 * outbox, the backlog metrics show them), then a memory service with a working Redis drains the
 * outbox onto the queue, each job once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddingState, memoryServices } from "@3ngram/proto/memory/v1";
import { MemoryType } from "@3ngram/proto/common/v1/memory";
import { createTenantWithKey, loadMemoryConfig, startMemoryService, type RunningMemoryService } from "@3ngram/memory";
import { createRedisQueueBackend, type QueueBackend } from "@3ngram/queue";
import { createRpcClients } from "@3ngram/rpc";
import { createLogger } from "@3ngram/runtime";
import { EMBEDDINGS_QUEUE, EXTRACTION_QUEUE } from "@3ngram/schema";
import { createTestDatabase, deleteKeyPrefix, TEST_REDIS_URL, uniqueKeyPrefix, type TestDatabase } from "../../../../test/support/database.js";
import { createTestKeys, type TestKeys } from "../../../../test/support/keys.js";
import { eventually, freePort } from "../../../../test/support/processes.js";
import { writer } from "../../../../test/support/calls.js";
import { OutboxRelay } from "../../src/relay/outbox-relay.js";

let db: TestDatabase;
let keys: TestKeys;
const prefix = uniqueKeyPrefix("outbox");
const log = createLogger({ service: "test", level: "silent" });
const running: RunningMemoryService[] = [];
let queue: QueueBackend;

async function startMemory(redisUrl: string, metricsPort = 0): Promise<RunningMemoryService> {
  const service = await startMemoryService(
    loadMemoryConfig({
      DATABASE_URL: db.url,
      SERVICE_TRUSTED_JWKS: keys.trustedJwks,
      GRPC_HOST: "127.0.0.1",
      GRPC_PORT: "0",
      METRICS_PORT: String(metricsPort),
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: prefix,
      // No inline embedding: every memory needs an embedding job and an extraction job.
      EMBED_INLINE_BUDGET_MS: "0",
      EMBEDDINGS_PROVIDER: "hashing",
    }),
    { embedder: null, log },
  );
  running.push(service);
  return service;
}

/**
 * A memory service whose Redis address has nothing listening, with metrics on a port of its own.
 * A port from freePort() can be taken by another process before the service binds it (ephemeral
 * ports are shared with every outgoing connection on the machine), so a lost race picks another.
 */
async function startOfflineMemory(): Promise<{ offline: RunningMemoryService; metricsPort: number }> {
  for (let attempt = 1; ; attempt++) {
    const metricsPort = await freePort();
    try {
      return { offline: await startMemory(`redis://127.0.0.1:${await freePort()}`, metricsPort), metricsPort };
    } catch (err) {
      if (attempt >= 5 || (err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
    }
  }
}

async function outboxRows(): Promise<Array<{ job_name: string; relayed: boolean; memory_id: string }>> {
  const { rows } = await running[0]!.pool.query(
    "SELECT job_name, relayed_at IS NOT NULL AS relayed, payload->>'memoryId' AS memory_id FROM job_outbox ORDER BY id",
  );
  return rows;
}

beforeAll(async () => {
  db = await createTestDatabase("outbox");
  keys = await createTestKeys();
  queue = createRedisQueueBackend({ redisUrl: TEST_REDIS_URL, prefix });
});
afterAll(async () => {
  for (const service of running) await service.close().catch(() => {});
  await queue?.close();
  await db?.drop();
  await deleteKeyPrefix(prefix);
});

describe("the job outbox", () => {
  it("acknowledges writes while the queue is unreachable, keeps their jobs, and drains them once a queue answers", async () => {
    const { offline, metricsPort } = await startOfflineMemory();
    const tenant = await createTenantWithKey(offline.pool, { tenantName: "outbox" });
    const client = createRpcClients(memoryServices, { address: offline.address, audience: "memory", signer: await keys.signer("gateway") });
    const ids: string[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        const stored = await client.memories.remember(
          { memoryType: MemoryType.NOTE, topic: "outage", content: `Written while Redis is away, number ${i}.` },
          writer(tenant),
        );
        expect(stored.embedded).toBe(EmbeddingState.PENDING);
        ids.push(stored.memory!.id);
      }
      // A refused write records no job.
      await expect(
        client.memories.remember({ memoryType: MemoryType.NOTE, topic: "outage", content: "Written while Redis is away, number 0." }, writer(tenant)),
      ).rejects.toMatchObject({
        reason: "duplicate_memory",
      });
    } finally {
      client.close();
    }

    const pending = await outboxRows();
    expect(pending).toHaveLength(10);
    expect(pending.every((r) => !r.relayed)).toBe(true);
    expect(new Set(pending.map((r) => r.memory_id))).toEqual(new Set(ids));
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/^threengram_outbox_pending_jobs\{[^}]*\} 10$/m);
    expect(Number(/^threengram_outbox_oldest_pending_seconds\{[^}]*\} (\S+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0);

    await offline.close();
    running.shift();
    await startMemory(TEST_REDIS_URL);
    await eventually(async () => expect((await outboxRows()).every((r) => r.relayed)).toBe(true), 20_000, 100);
    // Each job reached the queue once (deduplicated by job id while waiting).
    expect((await queue.counts(EMBEDDINGS_QUEUE)).waiting).toBe(5);
    expect((await queue.counts(EXTRACTION_QUEUE)).waiting).toBe(5);
  });

  it("keeps relayed rows a day and idempotency keys 24 hours, then removes them", async () => {
    const pool = running[0]!.pool;
    await pool.query("UPDATE job_outbox SET relayed_at = now() - interval '25 hours' WHERE id IN (SELECT id FROM job_outbox ORDER BY id LIMIT 4)");
    const relay = new OutboxRelay({ pool, role: "threengram_app", queue: queue.queue, log });
    expect(await relay.pruneExpired()).toEqual({ jobs: 4, keys: 0 });
    expect(await outboxRows()).toHaveLength(6);
  });
});
