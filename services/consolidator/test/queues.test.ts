import { afterEach, describe, expect, it } from "vitest";
import { HashingEmbedder } from "@3ngram/embeddings";
import { PermanentJobError, createMemoryQueueBackend, type QueueBackend } from "@3ngram/queue";
import { EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB } from "@3ngram/schema";
import { runJob, startWorkers } from "../src/queues.js";
import { MEMORY_ID, TENANT, eventually, fakeMemory, silentLog } from "./fakes.js";

const embedder = new HashingEmbedder({ dimensions: 32 });

describe("runJob", () => {
  it("refuses an unknown job name as permanent", async () => {
    const memory = fakeMemory();
    const run = runJob({ id: "1", name: "reticulate-splines", data: {}, attempt: 1 }, { memory, embedder, log: silentLog });
    await expect(run).rejects.toBeInstanceOf(PermanentJobError);
    await expect(run).rejects.toThrow(/unknown job name "reticulate-splines"/);
  });

  it("routes embed-memory to its runner", async () => {
    const memory = fakeMemory();
    const outcome = await runJob(
      { id: "1", name: EMBED_MEMORY_JOB, data: { tenantId: TENANT, memoryId: MEMORY_ID }, attempt: 1 },
      { memory, embedder, log: silentLog },
    );
    expect(outcome).toBe("not_found");
    expect(memory.getCalls).toHaveLength(1);
  });
});

describe("startWorkers on the in-process queue", () => {
  let backend: QueueBackend;
  afterEach(() => backend.close());

  it("runs embed jobs, retries transient failures, dead-letters unknown jobs at once, and reports each attempt", async () => {
    backend = createMemoryQueueBackend();
    const memory = fakeMemory({
      [MEMORY_ID]: { tenantId: TENANT, topic: "t", content: "c", embeddingState: "pending" },
    });
    memory.failNext.getMemories.push(new Error("connection reset"));
    const outcomes: string[] = [];
    const workers = startWorkers({
      backend,
      deps: { memory, embedder, log: silentLog },
      concurrency: 2,
      onOutcome: (job, outcome) => outcomes.push(`${job}:${outcome}`),
    });

    const retry = { attempts: 3, backoffMs: 10 };
    await backend.queue.enqueue(EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB, { tenantId: TENANT, memoryId: MEMORY_ID }, { retry });
    await eventually(() => expect(memory.storeCalls).toHaveLength(1));
    await backend.queue.enqueue(EMBEDDINGS_QUEUE, "reticulate-splines", {}, { retry });
    await eventually(async () => expect((await backend.counts(EMBEDDINGS_QUEUE)).failed).toBe(1));
    await workers.close();

    expect(outcomes).toEqual(["embed-memory:failed_retryable", "embed-memory:embedded", "unknown:failed_permanent"]);
  });
});
