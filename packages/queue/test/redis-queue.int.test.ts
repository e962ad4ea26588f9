/**
 * Runs the shared suite against BullMQ on the machine's real Redis. Every run writes under its
 * own key prefix and deletes those keys at the end, so runs never see each other's jobs.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createRedisQueueBackend } from "../src/index.js";
import { deleteKeyPrefix, TEST_REDIS_URL } from "../../../test/support/database.js";
import { describeQueueBackend } from "./queue-backend-suite.js";

const prefix = `test-queue-${process.pid}-${Date.now()}`;

describeQueueBackend("BullMQ", () => createRedisQueueBackend({ redisUrl: TEST_REDIS_URL, prefix }));

afterAll(async () => {
  await deleteKeyPrefix(prefix);
});

describe("BullMQ queue backend without Redis", () => {
  it("rejects an enqueue within its timeout instead of hanging", async () => {
    // Port 1 refuses connections; ioredis keeps reconnecting in the background.
    const backend = createRedisQueueBackend({ redisUrl: "redis://127.0.0.1:1", prefix, enqueueTimeoutMs: 200 });
    try {
      await expect(backend.queue.enqueue("q", "n", {})).rejects.toThrow(/enqueue timed out/);
    } finally {
      await backend.close();
    }
  });
});
