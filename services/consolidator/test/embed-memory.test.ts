import { describe, expect, it } from "vitest";
import { HashingEmbedder } from "@3ngram/embeddings";
import { AppError } from "@3ngram/errors";
import { PermanentJobError } from "@3ngram/queue";
import { embedMemory } from "../src/jobs/embed-memory.js";
import { MEMORY_ID, OTHER_TENANT, TENANT, fakeMemory, silentLog, type StoredMemory } from "./fakes.js";

const embedder = new HashingEmbedder({ dimensions: 64 });
const pending: StoredMemory = { tenantId: TENANT, topic: "deploys", content: "We deploy on Tuesdays.", embeddingState: "pending" };

describe("embedMemory", () => {
  it.each([
    ["a missing field", { tenantId: TENANT }],
    ["a malformed id", { tenantId: TENANT, memoryId: "not-a-uuid" }],
    ["an unknown key", { tenantId: TENANT, memoryId: MEMORY_ID, extra: 1 }],
    ["no object at all", "embed please"],
  ])("refuses a payload with %s as permanent, without calling the memory service", async (_label, payload) => {
    const memory = fakeMemory();
    const run = embedMemory(payload, { memory, embedder, log: silentLog });
    await expect(run).rejects.toBeInstanceOf(PermanentJobError);
    await expect(run).rejects.toThrow(/invalid embed-memory payload/);
    expect(memory.getCalls).toHaveLength(0);
  });

  it("embeds topic and content of a pending memory and stores the vector with the model name", async () => {
    const memory = fakeMemory({ [MEMORY_ID]: { ...pending } });
    const outcome = await embedMemory({ tenantId: TENANT, memoryId: MEMORY_ID }, { memory, embedder, log: silentLog });

    expect(outcome).toBe("embedded");
    expect(memory.getCalls).toEqual([
      { ids: [MEMORY_ID], maxContentChars: 8000, options: { identity: { tenantId: TENANT, scopes: ["memory:read", "internal:embed"] } } },
    ]);
    const [expected] = await embedder.embed(["deploys\nWe deploy on Tuesdays."]);
    expect(memory.storeCalls).toEqual([
      { memoryId: MEMORY_ID, model: "hashing-64", vector: expected, options: { identity: { tenantId: TENANT, scopes: ["internal:embed"] } } },
    ]);
    expect(memory.memories.get(MEMORY_ID)?.embeddingState).toBe("done");
  });

  it("does nothing for a memory that is already embedded (a second run is a no-op)", async () => {
    const memory = fakeMemory({ [MEMORY_ID]: { ...pending } });
    const deps = { memory, embedder, log: silentLog };
    await embedMemory({ tenantId: TENANT, memoryId: MEMORY_ID }, deps);
    const again = await embedMemory({ tenantId: TENANT, memoryId: MEMORY_ID }, deps);

    expect(again).toBe("already_embedded");
    expect(memory.storeCalls).toHaveLength(1);
  });

  it("finishes without storing when the memory is not found for this tenant", async () => {
    const memory = fakeMemory({ [MEMORY_ID]: { ...pending, tenantId: OTHER_TENANT } });
    const outcome = await embedMemory({ tenantId: TENANT, memoryId: MEMORY_ID }, { memory, embedder, log: silentLog });

    expect(outcome).toBe("not_found");
    expect(memory.storeCalls).toHaveLength(0);
  });

  it("lets a transient failure propagate so the queue retries it", async () => {
    const memory = fakeMemory({ [MEMORY_ID]: { ...pending } });
    memory.failNext.getMemories.push(new AppError("unavailable", "memory service unavailable, retry later", { retryable: true }));
    const run = embedMemory({ tenantId: TENANT, memoryId: MEMORY_ID }, { memory, embedder, log: silentLog });

    await expect(run).rejects.toThrow(AppError);
    await expect(run).rejects.not.toBeInstanceOf(PermanentJobError);
  });

  it("lets an embedder failure propagate so the queue retries it", async () => {
    const memory = fakeMemory({ [MEMORY_ID]: { ...pending } });
    const failing = { model: "broken", dimensions: 64, embed: async () => Promise.reject(new Error("model busy")) };
    const run = embedMemory({ tenantId: TENANT, memoryId: MEMORY_ID }, { memory, embedder: failing, log: silentLog });

    await expect(run).rejects.toThrow("model busy");
    await expect(run).rejects.not.toBeInstanceOf(PermanentJobError);
    expect(memory.storeCalls).toHaveLength(0);
  });

  it("treats a refusal that retrying cannot change as permanent", async () => {
    const memory = fakeMemory({ [MEMORY_ID]: { ...pending } });
    memory.failNext.storeEmbedding.push(new AppError("invalid_input", "vector: expected 512 dimensions", { field: "vector" }));
    const run = embedMemory({ tenantId: TENANT, memoryId: MEMORY_ID }, { memory, embedder, log: silentLog });

    await expect(run).rejects.toBeInstanceOf(PermanentJobError);
  });

  it("finishes when the memory disappears between read and store", async () => {
    const memory = fakeMemory({ [MEMORY_ID]: { ...pending } });
    memory.failNext.storeEmbedding.push(new AppError("not_found", `memory ${MEMORY_ID} not found`));
    const outcome = await embedMemory({ tenantId: TENANT, memoryId: MEMORY_ID }, { memory, embedder, log: silentLog });

    expect(outcome).toBe("not_found");
  });
});
