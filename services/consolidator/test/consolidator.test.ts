import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { HashingEmbedder } from "@3ngram/embeddings";
import { createMemoryQueueBackend, type QueueBackend } from "@3ngram/queue";
import { generateServiceKeyPair } from "@3ngram/rpc";
import { loadConfig } from "@3ngram/runtime";
import { EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB } from "@3ngram/schema";
import { consolidatorConfigSchema, startConsolidator, type Consolidator } from "../src/index.js";
import { MEMORY_ID, TENANT, eventually, fakeMemory, silentLog } from "./fakes.js";

const { privateJwk } = await generateServiceKeyPair("consolidator-test");

describe("startConsolidator with injected dependencies (standalone mode)", () => {
  let consolidator: Consolidator | undefined;
  let backend: QueueBackend | undefined;
  afterEach(async () => {
    await consolidator?.close();
    await backend?.close();
  });

  it("consumes the embeddings queue and serves metrics and health", async () => {
    const metricsPort = await freePort();
    const config = loadConfig(consolidatorConfigSchema, {
      SERVICE_SIGNING_JWK: JSON.stringify(privateJwk),
      METRICS_PORT: String(metricsPort),
    });
    backend = createMemoryQueueBackend();
    const memory = fakeMemory({ [MEMORY_ID]: { tenantId: TENANT, topic: "t", content: "c", embeddingState: "pending" } });
    consolidator = await startConsolidator(
      { ...config, metricsPort },
      { backend, memory, embedder: new HashingEmbedder({ dimensions: 16 }), log: silentLog },
    );

    await backend.queue.enqueue(EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB, { tenantId: TENANT, memoryId: MEMORY_ID });
    await eventually(() => expect(memory.storeCalls).toHaveLength(1));

    const health = await fetch(`http://127.0.0.1:${metricsPort}/healthz`);
    expect(health.status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/threengram_consolidator_jobs_total\{job="embed-memory",outcome="embedded",service="consolidator"\} 1/);
    expect(metrics).toMatch(/threengram_consolidator_queue_jobs\{queue="embeddings",state="failed",service="consolidator"\} 0/);

    await consolidator.close();
    consolidator = undefined;
    // The injected backend belongs to the caller and stays usable.
    await backend.queue.enqueue(EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB, { tenantId: TENANT, memoryId: MEMORY_ID });
    expect((await backend.counts(EMBEDDINGS_QUEUE)).waiting).toBe(1);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}
