/**
 * startConsolidator wired as standalone mode wires it: an injected in-process queue, an injected
 * embedder and an injected gRPC client of the real memory service (on a fresh PostgreSQL database).
 * The production wiring (Redis backend and client built from config) is in integration/.
 */
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HashingEmbedder } from "@3ngram/embeddings";
import { createMemoryQueueBackend, type QueueBackend } from "@3ngram/queue";
import { SCOPES } from "@3ngram/rpc";
import { loadConfig } from "@3ngram/runtime";
import { EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB } from "@3ngram/schema";
import { startCoreServices, type CoreServices } from "../../../test/support/core-services.js";
import { freePort } from "../../../test/support/processes.js";
import { consolidatorConfigSchema, startConsolidator, type Consolidator } from "../src/index.js";
import { consolidatorClient, embeddingState, eventually, silentLog, storePending, type Tenant } from "./real-memory.js";
import type { MemoryPeer } from "../src/peers.js";

let stack: CoreServices;
let tenant: Tenant;

beforeAll(async () => {
  stack = await startCoreServices({ label: "consolidator-start", embedder: null });
  tenant = await stack.createTenant("consolidator tenant");
});

afterAll(async () => {
  await stack?.close();
});

describe("startConsolidator with injected dependencies (standalone mode)", () => {
  let consolidator: Consolidator | undefined;
  let backend: QueueBackend | undefined;
  let memory: MemoryPeer | undefined;
  afterEach(async () => {
    await consolidator?.close();
    await backend?.close();
    memory?.close();
  });

  it("consumes the embeddings queue, serves metrics and health, and leaves what it was given open", async () => {
    const metricsPort = await freePort();
    const config = loadConfig(consolidatorConfigSchema, {
      SERVICE_SIGNING_JWK: stack.keys.signingJwk,
      METRICS_PORT: String(metricsPort),
    });
    backend = createMemoryQueueBackend();
    memory = await consolidatorClient(stack);
    consolidator = await startConsolidator(config, { backend, memory, embedder: new HashingEmbedder({ dimensions: 16 }), log: silentLog });
    const metrics = () => fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
    // Every start runs the embedding backfill once (nothing is pending yet); the memory below is
    // stored after it, so the retry job is what embeds it.
    await eventually(async () =>
      expect(await metrics()).toMatch(/threengram_consolidator_jobs_total\{job="backfill-tenant",outcome="nothing_pending",service="consolidator"\} 1/),
    );
    const memoryId = await storePending(stack, tenant, { topic: "t", content: `c ${randomUUID()}` });

    await backend.queue.enqueue(EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB, { tenantId: tenant.tenantId, memoryId });
    await eventually(async () =>
      expect(await metrics()).toMatch(/threengram_consolidator_jobs_total\{job="embed-memory",outcome="embedded",service="consolidator"\} 1/),
    );
    expect(await embeddingState(stack, tenant, memoryId)).toBe("done");

    const health = await fetch(`http://127.0.0.1:${metricsPort}/healthz`);
    expect(health.status).toBe(200);
    expect(await metrics()).toMatch(/threengram_consolidator_queue_jobs\{queue="embeddings",state="failed",service="consolidator"\} 0/);

    await consolidator.close();
    consolidator = undefined;
    // The injected backend and memory peer belong to the caller and stay usable.
    await backend.queue.enqueue(EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB, { tenantId: tenant.tenantId, memoryId });
    expect((await backend.counts(EMBEDDINGS_QUEUE)).waiting).toBe(1);
    const read = await memory.memories.getMemories({ ids: [memoryId] }, { identity: { tenantId: tenant.tenantId, scopes: [SCOPES.read] } });
    expect(read.memories.map((m) => m.embedded)).toEqual(["done"]);
  });
});
