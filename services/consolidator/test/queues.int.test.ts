/**
 * Job routing and the workers, against the real memory service over gRPC and on both real queue
 * backends (the in-process one standalone mode uses, and BullMQ on Redis). A transient failure is
 * the memory service being down: the workers start against a port nothing listens on, and the real
 * service is started on that port once the first attempt has failed.
 */
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HashingEmbedder } from "@3ngram/embeddings";
import type { RunningMemoryService } from "@3ngram/memory";
import { PermanentJobError, createMemoryQueueBackend, createRedisQueueBackend, type QueueBackend, type QueueWorker } from "@3ngram/queue";
import { EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB } from "@3ngram/schema";
import { startCoreServices, type CoreServices } from "../../../test/support/core-services.js";
import { TEST_REDIS_URL, deleteKeyPrefix, uniqueKeyPrefix } from "../../../test/support/database.js";
import { freePort } from "../../../test/support/processes.js";
import { REDRIVE_DEAD_LETTERS_JOB } from "../src/jobs/redrive-dead-letters.js";
import { runJob, startWorkers } from "../src/queues.js";
import {
  consolidatorClient,
  embeddingState,
  otherJobDeps,
  eventually,
  silentLog,
  startMemoryOn,
  storePending,
  unreachableClient,
  type Tenant,
} from "./real-memory.js";
import type { MemoryPeer } from "../src/peers.js";

const embedder = new HashingEmbedder({ dimensions: 32 });

let stack: CoreServices;
let tenant: Tenant;
let memory: MemoryPeer;
let unreachable: MemoryPeer;
let others: Awaited<ReturnType<typeof otherJobDeps>>;

beforeAll(async () => {
  stack = await startCoreServices({ label: "consqueues", embedder: null });
  tenant = await stack.createTenant("queues tenant");
  memory = await consolidatorClient(stack);
  unreachable = await unreachableClient(stack);
  others = await otherJobDeps(stack);
});

afterAll(async () => {
  memory?.close();
  unreachable?.close();
  await others?.close();
  await stack?.close();
});

const pendingMemory = () => storePending(stack, tenant, { topic: "t", content: `c ${randomUUID()}` });

describe("runJob", () => {
  it("refuses an unknown job name as permanent", async () => {
    const run = runJob({ id: "1", name: "reticulate-splines", data: {}, attempt: 1 }, { ...others, memory: unreachable, embedder, log: silentLog });
    await expect(run).rejects.toBeInstanceOf(PermanentJobError);
    await expect(run).rejects.toThrow(/unknown job name "reticulate-splines"/);
  });

  it("routes embed-memory to its runner", async () => {
    const memoryId = await pendingMemory();
    const outcome = await runJob(
      { id: "1", name: EMBED_MEMORY_JOB, data: { tenantId: tenant.tenantId, memoryId }, attempt: 1 },
      { ...others, memory, embedder, log: silentLog },
    );
    expect(outcome).toBe("embedded");
    expect(await embeddingState(stack, tenant, memoryId)).toBe("done");
  });
});

describe.each([
  { name: "in-process", redisPrefix: undefined },
  { name: "Redis (BullMQ)", redisPrefix: uniqueKeyPrefix("consworkers") },
])("startWorkers on the $name queue", ({ redisPrefix }) => {
  let backend: QueueBackend | undefined;
  let workers: QueueWorker | undefined;
  let late: RunningMemoryService | undefined;
  let client: MemoryPeer | undefined;
  afterEach(async () => {
    await workers?.close();
    await backend?.close();
    client?.close();
    await late?.close();
    if (redisPrefix) await deleteKeyPrefix(redisPrefix);
  });

  it("retries while the memory service is down (as unavailable), embeds once it is up, dead-letters unknown jobs at once, and reports each attempt", async () => {
    // Its own key prefix, so the embed jobs the memory service queues itself are not in this queue.
    backend = redisPrefix ? createRedisQueueBackend({ redisUrl: TEST_REDIS_URL, prefix: redisPrefix }) : createMemoryQueueBackend();
    const port = await freePort();
    client = await consolidatorClient(stack, `127.0.0.1:${port}`);
    const memoryId = await pendingMemory();
    const outcomes: string[] = [];
    workers = startWorkers({
      backend,
      deps: { ...others, memory: client, embedder, log: silentLog },
      concurrency: 2,
      onOutcome: (job, outcome) => outcomes.push(`${job}:${outcome}`),
    });

    // Backoff doubles from 100 ms, so ten attempts span some 50 s: ample time for the service to come up.
    await backend.queue.enqueue(EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB, { tenantId: tenant.tenantId, memoryId }, { retry: { attempts: 10, backoffMs: 100 } });
    await eventually(() => expect(outcomes).toContain("embed-memory:failed_unavailable"));
    expect(await embeddingState(stack, tenant, memoryId)).toBe("pending");

    late = await startMemoryOn(stack, port);
    await eventually(() => expect(outcomes).toContain("embed-memory:embedded"), 60_000);
    expect(await embeddingState(stack, tenant, memoryId)).toBe("done");

    await backend.queue.enqueue(EMBEDDINGS_QUEUE, "reticulate-splines", {}, { retry: { attempts: 3, backoffMs: 10 } });
    await eventually(async () => expect((await backend!.counts(EMBEDDINGS_QUEUE)).failed).toBe(1));
    await workers.close();

    const embedAttempts = outcomes.filter((o) => o.startsWith("embed-memory:"));
    expect(embedAttempts.at(-1)).toBe("embed-memory:embedded");
    expect(embedAttempts.length).toBeGreaterThan(1);
    expect(new Set(embedAttempts.slice(0, -1))).toEqual(new Set(["embed-memory:failed_unavailable"]));
    expect(outcomes.filter((o) => o.startsWith("unknown:"))).toEqual(["unknown:failed_permanent"]);
    expect(await backend.counts(EMBEDDINGS_QUEUE)).toEqual({ waiting: 0, active: 0, delayed: 0, failed: 1 });
    expect(await backend.deadLetters(EMBEDDINGS_QUEUE)).toEqual({ unavailable: 0, permanent: 1, error: 0 });
  }, 90_000);

  it("dead-letters a job the memory service was down for through every attempt as unavailable; the periodic re-drive brings it back", async () => {
    backend = redisPrefix ? createRedisQueueBackend({ redisUrl: TEST_REDIS_URL, prefix: redisPrefix }) : createMemoryQueueBackend();
    const port = await freePort();
    client = await consolidatorClient(stack, `127.0.0.1:${port}`);
    const memoryId = await pendingMemory();
    const deps = { ...others, memory: client, embedder, log: silentLog, queue: backend.queue, deadLetters: backend };
    workers = startWorkers({ backend, deps, concurrency: 2 });
    await backend.queue.enqueue(EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB, { tenantId: tenant.tenantId, memoryId }, { retry: { attempts: 2, backoffMs: 10 } });
    await eventually(async () => expect(await backend!.deadLetters(EMBEDDINGS_QUEUE)).toEqual({ unavailable: 1, permanent: 0, error: 0 }));

    // Still down: the re-drive puts it back, it fails again and lands where it was.
    expect(await runJob({ id: "r1", name: REDRIVE_DEAD_LETTERS_JOB, data: {}, attempt: 1 }, deps)).toBe("redriven");
    await eventually(async () => expect(await backend!.counts(EMBEDDINGS_QUEUE)).toEqual({ waiting: 0, active: 0, delayed: 0, failed: 1 }));

    late = await startMemoryOn(stack, port);
    await eventually(
      async () => {
        await runJob({ id: "r2", name: REDRIVE_DEAD_LETTERS_JOB, data: {}, attempt: 1 }, deps);
        expect(await embeddingState(stack, tenant, memoryId)).toBe("done");
      },
      30_000,
      500,
    );
    await eventually(async () => expect(await backend!.counts(EMBEDDINGS_QUEUE)).toEqual({ waiting: 0, active: 0, delayed: 0, failed: 0 }));
  }, 60_000);
});
