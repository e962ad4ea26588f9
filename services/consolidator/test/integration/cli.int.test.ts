/**
 * The operator commands for dead letters, run as the built CLI against the real Redis: they count
 * dead letters per queue and cause, and put them back (one cause or all) with fresh attempts.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { PermanentJobError, UnavailableJobError, createRedisQueueBackend } from "@3ngram/queue";
import { EMBEDDINGS_QUEUE, EXTRACTION_QUEUE } from "@3ngram/schema";
import { TEST_REDIS_URL, deleteKeyPrefix, uniqueKeyPrefix } from "../../../../test/support/database.js";
import { REPO_ROOT, eventually } from "../../../../test/support/processes.js";

const run = promisify(execFile);
const prefix = uniqueKeyPrefix("conscli");
const backend = createRedisQueueBackend({ redisUrl: TEST_REDIS_URL, prefix });

afterAll(async () => {
  await backend.close();
  await deleteKeyPrefix(prefix);
});

async function cli(...args: string[]): Promise<unknown> {
  const { stdout } = await run(process.execPath, ["services/consolidator/dist/cli.js", ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix },
  });
  return JSON.parse(stdout) as unknown;
}

describe("consolidator CLI: dead letters", () => {
  it("counts dead letters by cause and re-drives them by queue and cause", async () => {
    const runs: string[] = [];
    let healed = false;
    for (const queue of [EMBEDDINGS_QUEUE, EXTRACTION_QUEUE]) {
      backend.work(queue, async (job) => {
        runs.push(`${queue}/${job.name}/${job.attempt}`);
        if (healed) return;
        if (job.name === "bad") throw new PermanentJobError("refused");
        throw new UnavailableJobError("memory service unavailable");
      });
    }
    await backend.queue.enqueue(EMBEDDINGS_QUEUE, "bad", {});
    await backend.queue.enqueue(EMBEDDINGS_QUEUE, "away", {});
    await backend.queue.enqueue(EXTRACTION_QUEUE, "away", {});
    await eventually(async () => expect((await backend.counts(EMBEDDINGS_QUEUE)).failed + (await backend.counts(EXTRACTION_QUEUE)).failed).toBe(3));

    expect(await cli("dead-letters")).toMatchObject({
      [EMBEDDINGS_QUEUE]: { failed: 2, byCause: { unavailable: 1, permanent: 1, error: 0 } },
      [EXTRACTION_QUEUE]: { failed: 1, byCause: { unavailable: 1, permanent: 0, error: 0 } },
    });

    healed = true;
    expect(await cli("redrive", EMBEDDINGS_QUEUE, "--cause", "permanent")).toEqual({ redriven: { [EMBEDDINGS_QUEUE]: 1 }, cause: "permanent" });
    // A fresh set of attempts: the re-driven job runs as attempt 1 again.
    await eventually(() => expect(runs.filter((r) => r === `${EMBEDDINGS_QUEUE}/bad/1`)).toHaveLength(2));
    expect(await cli("redrive")).toMatchObject({ redriven: { [EMBEDDINGS_QUEUE]: 1, [EXTRACTION_QUEUE]: 1 } });
    await eventually(async () => expect((await backend.counts(EMBEDDINGS_QUEUE)).failed + (await backend.counts(EXTRACTION_QUEUE)).failed).toBe(0));
  });

  it("refuses an unknown queue or cause with the usage text", async () => {
    for (const args of [
      ["redrive", "nope"],
      ["redrive", "--cause", "bored"],
      ["dead-letters", "extra"],
    ]) {
      const failure = await cli(...args).catch((err: { code?: number; stderr?: string }) => err);
      expect(failure).toMatchObject({ code: 2 });
      expect((failure as { stderr: string }).stderr).toMatch(/^usage: /);
    }
  });
});
