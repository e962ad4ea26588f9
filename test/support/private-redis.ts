/**
 * A redis-server of a test's own on a free port, for tests that stop Redis: the shared server on
 * 6379 is never touched. Persistence is on (an append-only file in a temporary directory), as a
 * production Redis behind BullMQ must have, so a stop and start keeps the queues.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort, waitFor } from "./processes.js";

export interface PrivateRedis {
  port: number;
  url: string;
  /** Shuts the server down (SIGTERM: the append-only file is flushed) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port and directory, with the data it had. */
  start(): Promise<void>;
  destroy(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const dir = mkdtempSync(join(tmpdir(), "3ngram-redis-"));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;

  const start = async () => {
    child = spawn(
      process.env.TEST_REDIS_SERVER ?? "redis-server",
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        dir,
        "--save",
        "",
        "--appendonly",
        "yes",
        "--appendfsync",
        "everysec",
        "--maxmemory-policy",
        "noeviction",
      ],
      { stdio: "ignore" },
    );
    const ping = async () => {
      const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      redis.on("error", () => {});
      try {
        await redis.connect();
        return (await redis.ping()) === "PONG";
      } finally {
        redis.disconnect();
      }
    };
    await waitFor(`redis on ${port}`, ping, 15_000);
  };
  const stop = async () => {
    const running = child;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once("exit", () => resolve()));
    running.kill("SIGTERM");
    await exited;
  };

  await start();
  return {
    port,
    url,
    stop,
    start,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
