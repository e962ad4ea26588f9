/**
 * The embed-memory job against the real memory service over gRPC, on a fresh PostgreSQL database.
 * The memory service runs without an embedder, so every memory is stored pending; outcomes are read
 * back from the service and the database. Failures come from real components: a port nothing
 * listens on, an embeddings endpoint that is down, a key the service does not trust, a vector the
 * service will not store, and an operator erasing the memory mid-job.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddingsError, HashingEmbedder, OpenAIEmbedder, memoryEmbeddingText, type Embedder } from "@3ngram/embeddings";
import { AppError } from "@3ngram/errors";
import { PermanentJobError } from "@3ngram/queue";
import { startCoreServices, type CoreServices } from "../../../test/support/core-services.js";
import { freePort } from "../../../test/support/processes.js";
import { embedMemory } from "../src/jobs/embed-memory.js";
import {
  consolidatorClient,
  embedDoneEvents,
  embeddingState,
  eraseMemory,
  silentLog,
  storePending,
  storedEmbedding,
  unreachableClient,
  untrustedClient,
  type Tenant,
} from "./real-memory.js";
import type { MemoryPeer } from "../src/peers.js";

const embedder = new HashingEmbedder({ dimensions: 64 });

let stack: CoreServices;
let tenantA: Tenant;
let tenantB: Tenant;
let memory: MemoryPeer;
let unreachable: MemoryPeer;

beforeAll(async () => {
  stack = await startCoreServices({ label: "embedjob", embedder: null });
  tenantA = await stack.createTenant("embed job tenant a");
  tenantB = await stack.createTenant("embed job tenant b");
  memory = await consolidatorClient(stack);
  unreachable = await unreachableClient(stack);
});

afterAll(async () => {
  memory?.close();
  unreachable?.close();
  await stack?.close();
});

const deps = () => ({ memory, embedder, log: silentLog });
const pendingMemory = (tenant: Tenant = tenantA) => storePending(stack, tenant, { topic: "deploys", content: `We deploy on Tuesdays (${randomUUID()}).` });

describe("embedMemory against the real memory service", () => {
  it.each([
    ["a missing field", () => ({ tenantId: tenantA.tenantId })],
    ["a malformed id", () => ({ tenantId: tenantA.tenantId, memoryId: "not-a-uuid" })],
    ["an unknown key", () => ({ tenantId: tenantA.tenantId, memoryId: randomUUID(), extra: 1 })],
    ["no object at all", () => "embed please"],
  ])("refuses a payload with %s as permanent, without calling the memory service", async (_label, payload) => {
    // The client points at a port nothing listens on: had the job called it, it would fail as unavailable.
    const run = embedMemory(payload(), { memory: unreachable, embedder, log: silentLog });
    await expect(run).rejects.toBeInstanceOf(PermanentJobError);
    await expect(run).rejects.toThrow(/invalid embed-memory payload/);
  });

  it("embeds topic and content of a pending memory and stores the vector with the model name", async () => {
    const topic = "deploys";
    const content = `We deploy on Tuesdays (${randomUUID()}).`;
    const memoryId = await storePending(stack, tenantA, { topic, content });

    expect(await embedMemory({ tenantId: tenantA.tenantId, memoryId }, deps())).toBe("embedded");

    expect(await embeddingState(stack, tenantA, memoryId)).toBe("done");
    const [expected] = await embedder.embed([memoryEmbeddingText({ topic, content })]);
    const stored = await storedEmbedding(stack, memoryId, expected!);
    expect(stored).toMatchObject({ model: "hashing-64", dimensions: 64 });
    expect(stored!.similarity).toBeGreaterThan(0.9999);
    // Stored in the job's tenant, and recorded as the worker's doing (the consolidator's credential).
    expect(await embedDoneEvents(stack, memoryId)).toEqual([{ tenantId: tenantA.tenantId, actor: "worker", payload: { model: "hashing-64", dimensions: 64 } }]);
  });

  it("accepts the memory id in upper case", async () => {
    const memoryId = await pendingMemory();
    expect(await embedMemory({ tenantId: tenantA.tenantId, memoryId: memoryId.toUpperCase() }, deps())).toBe("embedded");
    expect(await embeddingState(stack, tenantA, memoryId)).toBe("done");
  });

  it("does nothing for a memory that is already embedded (a second run is a no-op)", async () => {
    const memoryId = await pendingMemory();
    await embedMemory({ tenantId: tenantA.tenantId, memoryId }, deps());
    const again = await embedMemory({ tenantId: tenantA.tenantId, memoryId }, deps());

    expect(again).toBe("already_embedded");
    expect(await embedDoneEvents(stack, memoryId)).toHaveLength(1);
  });

  it("finishes without storing when the memory is not found for this tenant", async () => {
    const foreign = await pendingMemory(tenantB);
    expect(await embedMemory({ tenantId: tenantA.tenantId, memoryId: foreign }, deps())).toBe("not_found");
    expect(await embedMemory({ tenantId: tenantA.tenantId, memoryId: randomUUID() }, deps())).toBe("not_found");

    expect(await embeddingState(stack, tenantB, foreign)).toBe("pending");
    expect(await embedDoneEvents(stack, foreign)).toHaveLength(0);
  });

  it("lets an unreachable memory service propagate so the queue retries it", async () => {
    const memoryId = await pendingMemory();
    const run = embedMemory({ tenantId: tenantA.tenantId, memoryId }, { memory: unreachable, embedder, log: silentLog });

    await expect(run).rejects.toBeInstanceOf(AppError);
    await expect(run).rejects.toMatchObject({ reason: "unavailable" });
    await expect(run).rejects.not.toBeInstanceOf(PermanentJobError);
    expect(await embeddingState(stack, tenantA, memoryId)).toBe("pending");
  });

  it("lets an embedder failure propagate so the queue retries it", async () => {
    const memoryId = await pendingMemory();
    // A real provider whose endpoint is down.
    const down = new OpenAIEmbedder({ baseUrl: `http://127.0.0.1:${await freePort()}/v1`, model: "text-embedding-3-small", dimensions: 64 });
    const run = embedMemory({ tenantId: tenantA.tenantId, memoryId }, { memory, embedder: down, log: silentLog });

    await expect(run).rejects.toBeInstanceOf(EmbeddingsError);
    await expect(run).rejects.not.toBeInstanceOf(PermanentJobError);
    expect(await embeddingState(stack, tenantA, memoryId)).toBe("pending");
    expect(await embedDoneEvents(stack, memoryId)).toHaveLength(0);
  });

  it.each([
    ["invalid_input", "a vector the memory service will not store", async () => ({ memory, embedder: new HashingEmbedder({ dimensions: 2001 }) })],
    ["unauthenticated", "a credential the memory service does not trust", async () => ({ memory: await untrustedClient(stack), embedder })],
  ])("treats a refusal that retrying cannot change as permanent: %s (%s)", async (reason, _what, setup) => {
    const memoryId = await pendingMemory();
    const parts = await setup();
    try {
      const run = embedMemory({ tenantId: tenantA.tenantId, memoryId }, { ...parts, log: silentLog });
      await expect(run).rejects.toBeInstanceOf(PermanentJobError);
      await expect(run).rejects.toThrow(`memory service refused: ${reason}`);
    } finally {
      if (parts.memory !== memory) parts.memory.close();
    }
    expect(await embeddingState(stack, tenantA, memoryId)).toBe("pending");
  });

  it("finishes when the memory disappears between read and store", async () => {
    const memoryId = await pendingMemory();
    // The real embedder, with the memory erased while the vector is computed (after the read, before the store).
    const erasing: Embedder = {
      model: embedder.model,
      dimensions: embedder.dimensions,
      async embed(texts, options) {
        await eraseMemory(stack, memoryId);
        return embedder.embed(texts, options);
      },
    };
    const outcome = await embedMemory({ tenantId: tenantA.tenantId, memoryId }, { memory, embedder: erasing, log: silentLog });

    expect(outcome).toBe("not_found");
    expect(await embeddingState(stack, tenantA, memoryId)).toBe("not_found");
  });
});
