/**
 * One behavioural suite, run against every backend: standalone and distributed mode must behave
 * the same for the job code, so the same assertions hold for both.
 */
import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-node";
import { startTracing } from "@3ngram/runtime";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PermanentJobError, UnavailableJobError, type Job, type QueueBackend, type QueueCounts } from "../src/index.js";
import { eventually } from "../../../test/support/processes.js";

/** Tiny backoff keeps retries quick; the suite asserts order and counts, never durations. */
const BACKOFF_MS = 20;

export function describeQueueBackend(name: string, createBackend: () => QueueBackend): void {
  describe(`${name} queue backend`, () => {
    const open: QueueBackend[] = [];
    let queueSeq = 0;

    const setup = () => {
      const backend = createBackend();
      open.push(backend);
      // A fresh queue per test, so no test sees another's jobs or counts.
      const queueName = `q${++queueSeq}`;
      return { backend, queueName };
    };

    afterEach(async () => {
      await Promise.all(open.splice(0).map((b) => b.close()));
    });

    // Tracing on for this file's process, so the trace-context test sees real span contexts.
    const exporter = new InMemorySpanExporter();
    let tracing: ReturnType<typeof startTracing> | undefined;
    beforeAll(() => {
      tracing = startTracing({ serviceName: "queue-test", exporter });
    });
    afterAll(async () => {
      await tracing?.shutdown();
    });

    it("runs the job, every attempt of it, in the trace it was enqueued in, without touching the payload", async () => {
      const { backend, queueName } = setup();
      const seen: Array<{ traceId: string | undefined; data: unknown }> = [];
      backend.work(queueName, async (job) => {
        seen.push({ traceId: trace.getActiveSpan()?.spanContext().traceId, data: job.data });
        if (job.attempt === 1) throw new Error("transient");
      });
      const traceId = await trace.getTracer("queue-test").startActiveSpan("request", async (span) => {
        await backend.queue.enqueue(queueName, "traced", { n: 1 }, { retry: { attempts: 2, backoffMs: BACKOFF_MS } });
        span.end();
        return span.spanContext().traceId;
      });
      await eventually(() => expect(seen).toHaveLength(2));
      expect(seen).toEqual([
        { traceId, data: { n: 1 } },
        { traceId, data: { n: 1 } },
      ]);
      // A job enqueued outside any trace runs in a trace of its own.
      await backend.queue.enqueue(queueName, "untraced", { n: 2 });
      await eventually(() => expect(seen).toHaveLength(3));
      expect(seen[2]!.traceId).not.toBe(traceId);
    });

    it("runs a job once with its name, payload and attempt number", async () => {
      const { backend, queueName } = setup();
      const seen: Job[] = [];
      backend.work(queueName, async (job) => void seen.push(job));
      await backend.queue.enqueue(queueName, "greet", { who: "world", n: [1, 2] });

      await eventually(() => expect(seen).toHaveLength(1));
      await eventually(async () => expect(await backend.counts(queueName)).toEqual(idle()));
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ name: "greet", data: { who: "world", n: [1, 2] }, attempt: 1 });
      expect(typeof seen[0]!.id).toBe("string");
    });

    it("counts jobs waiting for a worker", async () => {
      const { backend, queueName } = setup();
      await backend.queue.enqueue(queueName, "a", {});
      await backend.queue.enqueue(queueName, "b", {});
      expect(await backend.counts(queueName)).toEqual({ ...idle(), waiting: 2 });

      const names: string[] = [];
      backend.work(queueName, async (job) => void names.push(job.name));
      await eventually(() => expect(names).toEqual(["a", "b"]));
    });

    it("retries a failing job with backoff until it succeeds", async () => {
      const { backend, queueName } = setup();
      const attempts: number[] = [];
      backend.work(queueName, async (job) => {
        attempts.push(job.attempt);
        if (job.attempt < 3) throw new Error("transient");
      });
      await backend.queue.enqueue(queueName, "flaky", {}, { retry: { attempts: 5, backoffMs: BACKOFF_MS } });

      await eventually(() => expect(attempts).toEqual([1, 2, 3]));
      await eventually(async () => expect(await backend.counts(queueName)).toEqual(idle()));
      expect(attempts).toEqual([1, 2, 3]);
    });

    it("moves a job that exhausts its attempts to failed", async () => {
      const { backend, queueName } = setup();
      const attempts: number[] = [];
      backend.work(queueName, async (job) => {
        attempts.push(job.attempt);
        throw new Error("always");
      });
      await backend.queue.enqueue(queueName, "doomed", {}, { retry: { attempts: 3, backoffMs: BACKOFF_MS } });

      await eventually(async () => expect(await backend.counts(queueName)).toEqual({ ...idle(), failed: 1 }));
      expect(attempts).toEqual([1, 2, 3]);
    });

    it("does not retry a job that throws PermanentJobError", async () => {
      const { backend, queueName } = setup();
      const attempts: number[] = [];
      backend.work(queueName, async (job) => {
        attempts.push(job.attempt);
        throw new PermanentJobError("bad payload");
      });
      await backend.queue.enqueue(queueName, "bad", {}, { retry: { attempts: 5, backoffMs: BACKOFF_MS } });

      await eventually(async () => expect(await backend.counts(queueName)).toEqual({ ...idle(), failed: 1 }));
      expect(attempts).toEqual([1]);
    });

    it("runs a job id enqueued twice while it waits only once", async () => {
      const { backend, queueName } = setup();
      await backend.queue.enqueue(queueName, "embed", { n: 1 }, { jobId: "embed-m1" });
      await backend.queue.enqueue(queueName, "embed", { n: 2 }, { jobId: "embed-m1" });
      await backend.queue.enqueue(queueName, "embed", { n: 3 }, { jobId: "embed-m2" });
      expect((await backend.counts(queueName)).waiting).toBe(2);

      const payloads: unknown[] = [];
      backend.work(queueName, async (job) => void payloads.push(job.data));
      await eventually(async () => expect(await backend.counts(queueName)).toEqual(idle()));
      expect(payloads).toEqual([{ n: 1 }, { n: 3 }]);
    });

    it("ignores a job id enqueued again while that job runs, and accepts it once it finished", async () => {
      const { backend, queueName } = setup();
      const gate = deferred();
      const payloads: unknown[] = [];
      backend.work(queueName, async (job) => {
        payloads.push(job.data);
        if (payloads.length === 1) await gate.promise;
      });
      await backend.queue.enqueue(queueName, "embed", { n: 1 }, { jobId: "embed-m1" });
      await eventually(() => expect(payloads).toHaveLength(1));
      await backend.queue.enqueue(queueName, "embed", { n: 2 }, { jobId: "embed-m1" });
      gate.resolve();
      await eventually(async () => expect(await backend.counts(queueName)).toEqual(idle()));
      expect(payloads).toEqual([{ n: 1 }]);

      await backend.queue.enqueue(queueName, "embed", { n: 3 }, { jobId: "embed-m1" });
      await eventually(() => expect(payloads).toEqual([{ n: 1 }, { n: 3 }]));
    });

    it("releases a job id once the job has failed for good", async () => {
      const { backend, queueName } = setup();
      const attempts: number[] = [];
      backend.work(queueName, async (job) => {
        attempts.push(job.attempt);
        if (attempts.length === 1) throw new PermanentJobError("first one fails");
      });
      await backend.queue.enqueue(queueName, "embed", {}, { jobId: "embed-m1" });
      await eventually(async () => expect((await backend.counts(queueName)).failed).toBe(1));

      await backend.queue.enqueue(queueName, "embed", {}, { jobId: "embed-m1" });
      await eventually(() => expect(attempts).toEqual([1, 1]));
    });

    it("runs up to `concurrency` jobs at once", async () => {
      const { backend, queueName } = setup();
      const gate = deferred();
      let running = 0;
      let peak = 0;
      backend.work(
        queueName,
        async () => {
          running += 1;
          peak = Math.max(peak, running);
          await gate.promise;
          running -= 1;
        },
        { concurrency: 2 },
      );
      for (let i = 0; i < 3; i++) await backend.queue.enqueue(queueName, "slow", { i });

      await eventually(() => expect(running).toBe(2));
      expect((await backend.counts(queueName)).waiting).toBe(1);
      gate.resolve();
      await eventually(async () => expect(await backend.counts(queueName)).toEqual(idle()));
      expect(peak).toBe(2);
    });

    it("waits for the active job when closing", async () => {
      const { backend, queueName } = setup();
      const gate = deferred();
      const events: string[] = [];
      backend.work(queueName, async () => {
        events.push("started");
        await gate.promise;
        events.push("finished");
      });
      await backend.queue.enqueue(queueName, "long", {});
      await eventually(() => expect(events).toEqual(["started"]));

      const closed = backend.close().then(() => void events.push("closed"));
      // Give close() every chance to return early before the job is released.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(events).toEqual(["started"]);
      gate.resolve();
      await closed;
      expect(events).toEqual(["started", "finished", "closed"]);
    });

    it("closes one worker without closing the backend", async () => {
      const { backend, queueName } = setup();
      const first: string[] = [];
      const worker = backend.work(queueName, async (job) => void first.push(job.name));
      await backend.queue.enqueue(queueName, "one", {});
      await eventually(() => expect(first).toEqual(["one"]));
      await worker.close();

      await backend.queue.enqueue(queueName, "two", {});
      expect((await backend.counts(queueName)).waiting).toBe(1);
      const second: string[] = [];
      backend.work(queueName, async (job) => void second.push(job.name));
      await eventually(() => expect(second).toEqual(["two"]));
      expect(first).toEqual(["one"]);
    });

    it("refuses new jobs once the producer side is closed", async () => {
      const { backend, queueName } = setup();
      await backend.queue.close();
      await expect(backend.queue.enqueue(queueName, "late", {})).rejects.toThrow(/closed/);
    });

    it("repeats a scheduled job with its name and payload; scheduling the same id again replaces it", async () => {
      const { backend, queueName } = setup();
      const runs: Job[] = [];
      backend.work(queueName, async (job) => void runs.push(job));
      await backend.schedule(queueName, { id: "tick", name: "sweep", payload: { v: 1 }, everyMs: 100 });
      await backend.schedule(queueName, { id: "tick", name: "sweep", payload: { v: 2 }, everyMs: 100, retry: { attempts: 2, backoffMs: BACKOFF_MS } });

      const payloadOf = (job: Job) => (job.data as { v: number }).v;
      await eventually(() => expect(runs.filter((r) => payloadOf(r) === 2).length).toBeGreaterThanOrEqual(3));
      // A run of the first definition may fire before the replacement lands (runs fall on clock
      // boundaries); once the second definition runs, it is the only schedule left.
      expect(new Set(runs.map((r) => r.name))).toEqual(new Set(["sweep"]));
      const firstReplaced = runs.findIndex((r) => payloadOf(r) === 2);
      expect(runs.slice(firstReplaced).map(payloadOf)).toEqual(runs.slice(firstReplaced).map(() => 2));
    });

    it("retries a failing scheduled run like any job", async () => {
      const { backend, queueName } = setup();
      const attempts: number[] = [];
      backend.work(queueName, async (job) => {
        attempts.push(job.attempt);
        if (attempts.length === 1) throw new Error("transient");
      });
      await backend.schedule(queueName, { id: "flaky", name: "sweep", everyMs: 100, retry: { attempts: 3, backoffMs: BACKOFF_MS } });
      // Only a retry runs a job a second time. The next repetition (every 100 ms) may run before
      // the retry's backoff ends, so the order of the runs is not part of the contract.
      await eventually(() => expect(attempts).toContain(2));
      expect(attempts[0]).toBe(1);
      expect((await backend.counts(queueName)).failed).toBe(0);
    });

    it("retries under a capped backoff policy through every attempt", async () => {
      const { backend, queueName } = setup();
      const attempts: number[] = [];
      backend.work(queueName, async (job) => {
        attempts.push(job.attempt);
        throw new Error("still failing");
      });
      await backend.queue.enqueue(queueName, "capped", {}, { retry: { attempts: 4, backoffMs: BACKOFF_MS, maxBackoffMs: BACKOFF_MS * 2 } });
      await eventually(async () => expect((await backend.counts(queueName)).failed).toBe(1));
      expect(attempts).toEqual([1, 2, 3, 4]);
    });

    it("counts dead letters by cause", async () => {
      const { backend, queueName } = setup();
      backend.work(queueName, async (job) => {
        if (job.name === "refused") throw new PermanentJobError("bad payload");
        if (job.name === "away") throw new UnavailableJobError("memory service unavailable");
        throw new Error("something else");
      });
      for (const name of ["refused", "away", "broken", "away"])
        await backend.queue.enqueue(queueName, name, {}, { retry: { attempts: 2, backoffMs: BACKOFF_MS } });
      await eventually(async () => expect((await backend.counts(queueName)).failed).toBe(4));
      expect(await backend.deadLetters(queueName)).toEqual({ unavailable: 2, permanent: 1, error: 1 });
    });

    it("re-drives the dead letters of one cause with a fresh set of attempts, leaving the others", async () => {
      const { backend, queueName } = setup();
      let peerBack = false;
      const runs: Array<[string, number]> = [];
      backend.work(queueName, async (job) => {
        runs.push([job.name, job.attempt]);
        if (job.name === "refused") throw new PermanentJobError("bad payload");
        if (!peerBack) throw new UnavailableJobError("memory service unavailable");
      });
      await backend.queue.enqueue(queueName, "refused", {}, { retry: { attempts: 2, backoffMs: BACKOFF_MS } });
      await backend.queue.enqueue(queueName, "away", {}, { jobId: "away-1", retry: { attempts: 2, backoffMs: BACKOFF_MS } });
      await eventually(async () => expect((await backend.counts(queueName)).failed).toBe(2));

      peerBack = true;
      expect(await backend.redrive(queueName, { cause: "unavailable" })).toBe(1);
      await eventually(async () => expect(await backend.counts(queueName)).toEqual({ ...idle(), failed: 1 }));
      expect(runs.filter(([name]) => name === "away")).toEqual([
        ["away", 1],
        ["away", 2],
        ["away", 1],
      ]);
      expect(await backend.deadLetters(queueName)).toEqual({ unavailable: 0, permanent: 1, error: 0 });

      // Without a cause every dead letter goes back; the refused one fails again.
      expect(await backend.redrive(queueName)).toBe(1);
      await eventually(() => expect(runs.filter(([name]) => name === "refused")).toHaveLength(2));
      await eventually(async () => expect((await backend.counts(queueName)).failed).toBe(1));
    });

    it("refuses malformed schedules", async () => {
      const { backend, queueName } = setup();
      await expect(backend.schedule(queueName, { id: "s", name: "x", everyMs: 0 })).rejects.toThrow(RangeError);
      await expect(backend.schedule(queueName, { id: "", name: "x", everyMs: 1000 })).rejects.toThrow(RangeError);
      await expect(backend.schedule(queueName, { id: "s", name: "", everyMs: 1000 })).rejects.toThrow(RangeError);
    });

    it("rejects malformed enqueue options the same way", async () => {
      const { backend, queueName } = setup();
      await expect(backend.queue.enqueue(queueName, "x", {}, { jobId: "" })).rejects.toThrow(RangeError);
      await expect(backend.queue.enqueue(queueName, "x", {}, { retry: { attempts: 0, backoffMs: 10 } })).rejects.toThrow(RangeError);
      await expect(backend.queue.enqueue(queueName, "", {})).rejects.toThrow(RangeError);
      await expect(backend.queue.enqueue(queueName, "x", {}, { retry: { attempts: 2, backoffMs: 100, maxBackoffMs: 50 } })).rejects.toThrow(RangeError);
    });
  });
}

function idle(): QueueCounts {
  return { waiting: 0, active: 0, delayed: 0, failed: 0 };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
