/** Hand-written stand-ins for the memory service, enough for the job logic; the integration test uses the real one. */
import { AppError } from "@3ngram/errors";
import type { CallOptions } from "@3ngram/rpc";
import { createLogger } from "@3ngram/runtime";
import type { MemoryClient } from "../src/jobs/embed-memory.js";

export const TENANT = "5b0c1c7e-2f7a-4e55-9a43-6d1c8f0f7a11";
export const OTHER_TENANT = "0f6f0a0e-8d5e-4c1b-a0a7-2b3c4d5e6f70";
export const MEMORY_ID = "7d9f3a52-1c4b-4e8a-9f0d-3b2a1c0e9d87";

export const silentLog = createLogger({ service: "consolidator-test", level: "silent" });

export interface StoredMemory {
  tenantId: string;
  topic: string;
  content: string;
  embeddingState: "done" | "pending";
}

export interface FakeMemory extends MemoryClient {
  memories: Map<string, StoredMemory>;
  getCalls: { ids: string[]; maxContentChars: number | undefined; options: CallOptions }[];
  storeCalls: { memoryId: string; model: string; vector: number[]; options: CallOptions }[];
  /** Makes the next calls to this RPC fail with the given error. */
  failNext: { getMemories: unknown[]; storeEmbedding: unknown[] };
}

export function fakeMemory(memories: Record<string, StoredMemory> = {}): FakeMemory {
  const fake: FakeMemory = {
    memories: new Map(Object.entries(memories)),
    getCalls: [],
    storeCalls: [],
    failNext: { getMemories: [], storeEmbedding: [] },
    async getMemories(request, options) {
      const ids = [...(request.ids ?? [])];
      fake.getCalls.push({ ids, maxContentChars: request.maxContentChars, options });
      if (fake.failNext.getMemories.length > 0) throw fake.failNext.getMemories.shift();
      const visible = ids.filter((id) => fake.memories.get(id)?.tenantId === options.identity.tenantId);
      return {
        memories: visible.map((id) => {
          const m = fake.memories.get(id)!;
          return { id, topic: m.topic, content: m.content, embeddingState: m.embeddingState };
        }),
        notFound: ids.filter((id) => !visible.includes(id)),
      } as never;
    },
    async storeEmbedding(request, options) {
      const memoryId = request.memoryId ?? "";
      fake.storeCalls.push({ memoryId, model: request.model ?? "", vector: [...(request.vector ?? [])], options });
      if (fake.failNext.storeEmbedding.length > 0) throw fake.failNext.storeEmbedding.shift();
      const m = fake.memories.get(memoryId);
      if (!m || m.tenantId !== options.identity.tenantId) throw new AppError("not_found", `memory ${memoryId} not found`);
      const stored = m.embeddingState === "pending";
      m.embeddingState = "done";
      return { stored } as never;
    },
  };
  return fake;
}

export async function eventually(check: () => unknown, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}
