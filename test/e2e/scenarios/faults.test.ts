/**
 * The faults production brings, under a bounded write + search load: the four services as
 * separate processes against a PostgreSQL cluster and a Redis this file starts itself on free
 * ports. In turn: five immediate PostgreSQL restarts in a row, memory kill -9 + restart, search
 * kill -9 + restart, Redis stopped for 15 s, consolidator kill -9 in the middle of a job.
 *
 * Clients see only success or a retryable 503 / `unavailable` (never a 500); no process exits on
 * its own; the first write and search succeed within 10 s of each fault's end; after the load,
 * failed writes are repeated with their idempotency key, every acknowledged write is stored
 * exactly once, and within 90 s every memory is embedded and read for facts (jobs written to the
 * outbox = jobs run). The measured figures are printed at the end (docs/operations.md).
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "@3ngram/db";
import { createRedisQueueBackend, type QueueBackend } from "@3ngram/queue";
import { checkHealth } from "@3ngram/rpc";
import { EMBEDDINGS_QUEUE, EXTRACTION_QUEUE } from "@3ngram/schema";
import { ACCEPTABLE_STATUSES, FaultLoad, type WriteAttempt } from "../../support/fault-load.js";
import { createTestKeys } from "../../support/keys.js";
import { loadGatewayEnv, serviceEnv } from "../../support/service-env.js";
import { connectMcp, type McpConnection } from "../../support/mcp.js";
import { startPrivatePostgres, type PrivatePostgres } from "../../support/private-postgres.js";
import { startPrivateRedis, type PrivateRedis } from "../../support/private-redis.js";
import { REPO_ROOT, eventually, freePort, startServiceProcess, waitFor, type ServiceProcess } from "../../support/processes.js";

const run = promisify(execFile);

type Name = "memory" | "search" | "consolidator" | "gateway";
const SCRIPTS: Record<Name, string> = {
  memory: "services/memory/dist/main.js",
  search: "services/search/dist/main.js",
  consolidator: "services/consolidator/dist/main.js",
  gateway: "services/gateway/dist/main.js",
};

/** Generous liveness bounds, not speed targets: the issue asks for ≤ 10 s, aiming at ≤ 5 s. */
const RECOVERY_BOUND_MS = 10_000;
const DRAIN_BOUND_MS = 90_000;

interface FaultReport {
  fault: string;
  downMs: number;
  writeRecoveryMs: number;
  searchRecoveryMs: number;
  errors: Record<string, number>;
  requests: number;
}

let pg: PrivatePostgres;
let redis: PrivateRedis;
let owner: Pool;
let queues: QueueBackend;
let mcp: McpConnection;
let load: FaultLoad;
let baseUrl: string;
let apiKey: string;
let tenantId: string;
const runId = randomUUID().slice(0, 8);
const processes = {} as Record<Name, ServiceProcess>;
/** Every process started, killed ones included, for the log check at the end. */
const instances: ServiceProcess[] = [];
const envs = {} as Record<Name, Record<string, string>>;
/** Exits nobody asked for: the thing this suite exists to rule out. */
const unexpectedExits: string[] = [];
const killing = new Set<ServiceProcess>();
const reports: FaultReport[] = [];
const figures: Record<string, unknown> = {};

function spawn(name: Name): ServiceProcess {
  const proc = startServiceProcess(name, SCRIPTS[name], envs[name]);
  void proc.exited().then((code) => {
    if (!killing.has(proc)) unexpectedExits.push(`${name} exited with ${code} at ${new Date().toISOString()}:\n${proc.output().slice(-4000)}`);
  });
  processes[name] = proc;
  instances.push(proc);
  return proc;
}

async function kill9(name: Name): Promise<void> {
  const proc = processes[name];
  killing.add(proc);
  proc.child.kill("SIGKILL");
  await proc.exited();
}

/**
 * A fault of its own: kill -9, down for `downMs` while the load meets it, then started again. For
 * a gRPC service, how long the new process took to serve is noted too: the part of the first
 * success after the restart that is the process starting, the rest being the callers finding it.
 */
function killAndRestart(name: Name, downMs: number, address?: string): () => Promise<void> {
  return async () => {
    await kill9(name);
    await new Promise((resolve) => setTimeout(resolve, downMs));
    const spawnedAt = Date.now();
    const proc = spawn(name);
    if (address !== undefined) {
      void waitFor(`${name} serving again`, serving(address), 60_000, proc).then(
        () => (figures[`${name}RestartToServingMs`] = Date.now() - spawnedAt),
        () => {},
      );
    }
  };
}

const serving = (address: string) => async () => (await checkHealth(address)) === "SERVING";

async function rows<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  return (await owner.query(sql, params)).rows as T[];
}

/**
 * Runs one fault: `inject` breaks something and resolves when it is over (the component is back
 * or restarted); then waits for the first successful write and search that started after that.
 */
async function fault(name: string, inject: () => Promise<void>): Promise<FaultReport> {
  const downAt = Date.now();
  await inject();
  const backAt = Date.now();
  let write: number | undefined;
  let search: number | undefined;
  await waitFor(
    `${name}: a write and a search succeed again`,
    async () => {
      write ??= load.firstSuccess("write", backAt);
      search ??= load.firstSuccess("search", backAt);
      return write !== undefined && search !== undefined;
    },
    60_000,
  );
  const recoveredAt = Math.max(write!, search!);
  const report: FaultReport = {
    fault: name,
    downMs: backAt - downAt,
    writeRecoveryMs: write! - backAt,
    searchRecoveryMs: search! - backAt,
    errors: load.errorsBetween(downAt, recoveredAt),
    requests: load.countBetween("write", downAt, recoveredAt) + load.countBetween("search", downAt, recoveredAt),
  };
  reports.push(report);
  expect(unexpectedExits).toEqual([]);
  expect(report.writeRecoveryMs, `${name}: first write after the fault`).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
  expect(report.searchRecoveryMs, `${name}: first search after the fault`).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
  return report;
}

beforeAll(async () => {
  [pg, redis] = await Promise.all([startPrivatePostgres(), startPrivateRedis()]);
  await pg.createDatabase("threengram");
  const databaseUrl = pg.url("threengram");
  owner = createPool({ connectionString: databaseUrl, max: 2, applicationName: "3ngram-fault-test" });
  const keys = await createTestKeys();
  const prefix = `faults-${runId}`;
  const [memoryPort, searchPort, gatewayPort] = [await freePort(), await freePort(), await freePort()];
  const common = serviceEnv({ databaseUrl, redisUrl: redis.url, prefix, keys, memoryPort, searchPort });
  // No inline embedding: every memory's embedding goes through the outbox and the consolidator, so
  // "embedded" proves its job was neither lost nor stuck.
  envs.memory = { ...common, GRPC_PORT: String(memoryPort), EMBED_INLINE_BUDGET_MS: "0" };
  // Search runs the bundled model, as deployed, so its restart includes loading the model: it
  // serves before the model is in (queries then go without the vector leg). Its vectors are not
  // the stored ones' model, which only leaves that leg empty.
  envs.search = { ...common, GRPC_PORT: String(searchPort), EMBEDDINGS_PROVIDER: "local", EMBEDDINGS_WORKERS: "1" };
  // A short job lock: a job of a killed consolidator is taken over 5 s later instead of 30 s.
  envs.consolidator = { ...common, JOB_LOCK_MS: "5000", WORKER_CONCURRENCY: "4" };
  envs.gateway = { ...common, ...loadGatewayEnv(gatewayPort, prefix) };
  spawn("memory");
  await waitFor("memory serving", serving(common.MEMORY_ADDR), 60_000, processes.memory);
  spawn("search");
  spawn("consolidator");
  spawn("gateway");
  baseUrl = `http://127.0.0.1:${gatewayPort}`;
  await waitFor("search serving", serving(common.SEARCH_ADDR), 60_000, processes.search);
  await waitFor("gateway ready", async () => (await fetch(`${baseUrl}/ready`)).status === 200, 60_000, processes.gateway);
  const { stdout } = await run(process.execPath, ["services/memory/dist/cli.js", "create-tenant", "faults"], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", DATABASE_URL: databaseUrl },
  });
  ({ apiKey, tenantId } = JSON.parse(stdout) as { apiKey: string; tenantId: string });
  mcp = await connectMcp(`${baseUrl}/mcp`, apiKey);
  queues = createRedisQueueBackend({ redisUrl: redis.url, prefix });
  load = new FaultLoad({ baseUrl, apiKey, mcp, runId, restWriters: 3, mcpWriters: 1, restSearchers: 1, mcpSearchers: 1, pauseMs: 150 });
  load.start();
  // A steady state first: writes and searches succeed before anything breaks.
  await waitFor("the load running", async () => load.firstSuccess("write", 0) !== undefined && load.firstSuccess("search", 0) !== undefined, 30_000);
}, 180_000);

afterAll(async () => {
  await load?.stop();
  await mcp?.close().catch(() => {});
  await queues?.close().catch(() => {});
  for (const proc of Object.values(processes)) {
    killing.add(proc);
    await proc.stop();
  }
  await owner?.end().catch(() => {});
  await redis?.destroy();
  await pg?.destroy();
  printFigures();
}, 60_000);

describe("faults under load", () => {
  it("survives five immediate PostgreSQL restarts in a row with no process exit", async () => {
    for (let i = 1; i <= 5; i++) await fault(`PostgreSQL restart -m immediate #${i}`, () => pg.restart("immediate"));
    for (const name of ["memory", "search", "consolidator", "gateway"] as const) expect(processes[name].child.exitCode, name).toBeNull();
  }, 120_000);

  it("reports the database's absence in health and /ready, and recovers by itself when it is back", async () => {
    const health = () => Promise.all([checkHealth(envs.memory.MEMORY_ADDR!), checkHealth(envs.search.SEARCH_ADDR!)]);
    await fault("PostgreSQL stopped (fast) until health says so", async () => {
      await pg.stop("fast");
      await eventually(async () => expect(await health()).toEqual(["NOT_SERVING", "NOT_SERVING"]), 15_000, 100);
      await eventually(async () => expect((await fetch(`${baseUrl}/ready`)).status).toBe(503), 15_000, 100);
      await pg.start();
    });
    await eventually(async () => expect(await health()).toEqual(["SERVING", "SERVING"]), RECOVERY_BOUND_MS, 100);
    await eventually(async () => expect((await fetch(`${baseUrl}/ready`)).status).toBe(200), RECOVERY_BOUND_MS, 100);
  }, 60_000);

  it("recovers from memory kill -9 and a restart", async () => {
    await fault("memory kill -9 + restart", killAndRestart("memory", 2_000, envs.memory.MEMORY_ADDR));
  }, 60_000);

  it("recovers from search kill -9 and a restart", async () => {
    await fault("search kill -9 + restart", killAndRestart("search", 2_000, envs.search.SEARCH_ADDR));
  }, 60_000);

  it("keeps acknowledging writes while Redis is stopped for 15 s; the outbox grows and then drains", async () => {
    let pendingAtPeak = 0;
    const report = await fault("Redis stopped 15 s", async () => {
      await redis.stop();
      figures.redisDownFrom = new Date().toISOString();
      await new Promise((resolve) => setTimeout(resolve, 15_000));
      pendingAtPeak = (await rows<{ n: number }>("SELECT count(*)::int AS n FROM job_outbox WHERE relayed_at IS NULL"))[0]!.n;
      await redis.start();
      figures.redisDownTo = new Date().toISOString();
    });
    figures.outboxPendingAtEndOfRedisOutage = pendingAtPeak;
    // Writes need the database only: none failed while Redis was away.
    expect(Object.keys(report.errors).filter((label) => label.startsWith("write"))).toEqual([]);
    expect(pendingAtPeak).toBeGreaterThan(0);
    await eventually(
      async () => expect((await rows<{ n: number }>("SELECT count(*)::int AS n FROM job_outbox WHERE relayed_at IS NULL"))[0]!.n).toBe(0),
      30_000,
      250,
    );
  }, 90_000);

  it("recovers from a consolidator kill -9 in the middle of a job", async () => {
    // Wait until a job is running, then kill.
    await eventually(
      async () => expect((await queues.counts(EXTRACTION_QUEUE)).active + (await queues.counts(EMBEDDINGS_QUEUE)).active).toBeGreaterThan(0),
      20_000,
      20,
    );
    await fault("consolidator kill -9 mid-job + restart", killAndRestart("consolidator", 1_000));
  }, 60_000);

  it("answers only success or a retryable unavailable, never a 500", () => {
    const unexpected = load.outcomes.filter((o) => !ACCEPTABLE_STATUSES.has(o.status));
    const byStatus = (list: typeof load.outcomes) =>
      list.reduce<Record<string, number>>(
        (acc, o) => ({ ...acc, [`${o.kind} ${o.surface} ${o.status}`]: (acc[`${o.kind} ${o.surface} ${o.status}`] ?? 0) + 1 }),
        {},
      );
    figures.allAnswers = byStatus(load.outcomes);
    expect(byStatus(unexpected)).toEqual({});
  });

  it("stores every write exactly once once failed ones are repeated with their key, and a repeat returns the original id", async () => {
    await load.stop();
    expect(unexpectedExits).toEqual([]);
    const acknowledged = load.writes.filter((w) => w.id !== undefined);
    const failed = load.writes.filter((w) => w.id === undefined);
    figures.writes = { attempted: load.writes.length, acknowledged: acknowledged.length, failed: failed.length };

    // A write that failed may still have committed (the answer was lost, e.g. memory killed after
    // the commit): its repeat must name that memory; otherwise the repeat stores it now.
    let committedDespiteFailure = 0;
    for (const write of failed) {
      const before = await idsFor(write);
      const repeat = await load.send(write.surface, write.body, write.key);
      expect(["201", "ok"], `repeat of a failed ${write.surface} write`).toContain(repeat.status);
      if (before.length > 0) {
        committedDespiteFailure += 1;
        expect(repeat.id).toBe(before[0]);
      }
      write.id = repeat.id;
    }
    figures.failedWritesThatHadCommitted = committedDespiteFailure;

    // Every write, acknowledged or repeated, is stored once, under the id its answer named.
    const stored = new Map(
      (
        await rows<{ content: string; ids: string[] }>("SELECT content, array_agg(id::text) AS ids FROM memories WHERE tenant_id = $1 GROUP BY content", [
          tenantId,
        ])
      ).map((r) => [r.content, r.ids]),
    );
    expect(stored.size).toBe(load.writes.length);
    for (const write of load.writes) expect(stored.get(write.body.content), write.body.content).toEqual([write.id]);

    // Repeating acknowledged writes (both surfaces) names the original memory.
    const sample = [...acknowledged.filter((w) => w.surface === "rest").slice(0, 20), ...acknowledged.filter((w) => w.surface === "mcp").slice(0, 10)];
    for (const write of sample) {
      const repeat = await load.send(write.surface, write.body, write.key);
      expect(repeat).toEqual({ status: write.surface === "rest" ? "201" : "ok", id: write.id });
    }
    figures.idempotentRepeats = { repeated: sample.length, sameId: sample.length };

    // The same key on a different body is refused on both surfaces, and stores nothing.
    const [rest, viaMcp] = [sample.find((w) => w.surface === "rest")!, sample.find((w) => w.surface === "mcp")!];
    const changed = (w: WriteAttempt) => ({ ...w.body, content: `${w.body.content} (changed)` });
    expect((await load.send("rest", changed(rest), rest.key)).status).toBe("422");
    expect((await load.send("mcp", changed(viaMcp), viaMcp.key)).status).toBe("isError:idempotency_key_reused");
    expect(await rows("SELECT id FROM memories WHERE content LIKE '%(changed)'")).toEqual([]);
    expect(await memoryCount()).toBe(load.writes.length);
  }, 120_000);

  it("embeds every memory and runs every extraction within 90 s after the load stops: jobs written = jobs run", async () => {
    const started = Date.now();
    const total = await memoryCount();
    await explainOnFailure(() =>
      eventually(
        async () => {
          const [progress] = await rows<{ embedded: number; extracted: number }>(
            `SELECT count(*) FILTER (WHERE m.embedding IS NOT NULL)::int AS embedded,
                  count(*) FILTER (WHERE EXISTS (SELECT 1 FROM fact_proposals p WHERE p.memory_id = m.id))::int AS extracted
             FROM memories m WHERE m.tenant_id = $1`,
            [tenantId],
          );
          expect(progress).toEqual({ embedded: total, extracted: total });
        },
        DRAIN_BOUND_MS,
        500,
      ),
    );
    figures.drainAfterLoadMs = Date.now() - started;

    // Every memory recorded one job of each kind in the outbox, and each ran.
    const written = await rows<{ job_name: string; jobs: number; memories: number }>(
      "SELECT job_name, count(*)::int AS jobs, count(DISTINCT payload->>'memoryId')::int AS memories FROM job_outbox WHERE tenant_id = $1 GROUP BY job_name ORDER BY job_name",
      [tenantId],
    );
    expect(written).toEqual([
      { job_name: "embed-memory", jobs: total, memories: total },
      { job_name: "extract-facts", jobs: total, memories: total },
    ]);
    // Across the Redis outage in particular.
    const [outage] = await rows<{ written: number; embedded: number; extracted: number }>(
      `SELECT count(o.*)::int AS written,
              count(*) FILTER (WHERE o.job_name = 'embed-memory' AND m.embedding IS NOT NULL)::int AS embedded,
              count(*) FILTER (WHERE o.job_name = 'extract-facts' AND EXISTS (SELECT 1 FROM fact_proposals p WHERE p.memory_id = m.id))::int AS extracted
         FROM job_outbox o JOIN memories m ON m.id = (o.payload->>'memoryId')::uuid
        WHERE o.created_at BETWEEN $1 AND $2`,
      [figures.redisDownFrom, figures.redisDownTo],
    );
    figures.redisOutageJobs = { written: outage!.written, run: outage!.embedded + outage!.extracted };
    expect(outage!.written).toBeGreaterThan(0);
    expect(outage!.embedded + outage!.extracted).toBe(outage!.written);
    // A job whose work has committed stays active until its worker's acknowledgement reaches Redis
    // (seen: the last row written, one job still active): the queues drain a moment after the rows
    // say so, and a job stalled by the outage is recovered once its 5 s lock runs out.
    await eventually(
      async () => {
        expect(await queues.counts(EMBEDDINGS_QUEUE)).toMatchObject({ waiting: 0, active: 0, delayed: 0 });
        expect(await queues.counts(EXTRACTION_QUEUE)).toMatchObject({ waiting: 0, active: 0, delayed: 0 });
      },
      20_000,
      250,
    );
    figures.deadLetters = { [EMBEDDINGS_QUEUE]: await queues.deadLetters(EMBEDDINGS_QUEUE), [EXTRACTION_QUEUE]: await queues.deadLetters(EXTRACTION_QUEUE) };
    expect(unexpectedExits).toEqual([]);
  }, 150_000);

  it("needed no process-wide backstop: nothing escaped its owner and no promise rejection went unhandled", () => {
    const backstop = /unhandled promise rejection|escaped its owner|uncaught exception/;
    const hits = instances.flatMap((proc) =>
      proc
        .output()
        .split("\n")
        .filter((line) => backstop.test(line))
        .map((line) => `${proc.name}: ${line}`),
    );
    expect(hits).toEqual([]);
  });
});

/** On failure, prints where the stragglers' jobs are (outbox row, dead letters) before failing. */
async function explainOnFailure(check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (err) {
    const stragglers = await rows(
      `SELECT m.id, m.embedding IS NOT NULL AS embedded, EXISTS (SELECT 1 FROM fact_proposals p WHERE p.memory_id = m.id) AS extracted,
              (SELECT json_agg(json_build_object('job', o.job_name, 'created', o.created_at, 'relayed', o.relayed_at)) FROM job_outbox o WHERE o.payload->>'memoryId' = m.id::text) AS outbox
         FROM memories m WHERE m.tenant_id = $1 AND (m.embedding IS NULL OR NOT EXISTS (SELECT 1 FROM fact_proposals p WHERE p.memory_id = m.id))`,
      [tenantId],
    );
    const failed = [];
    for (const queue of [EMBEDDINGS_QUEUE, EXTRACTION_QUEUE]) {
      failed.push({ queue, counts: await queues.counts(queue), deadLetters: await queues.deadLetters(queue) });
    }
    console.log(JSON.stringify({ stragglers, failed }, null, 2));
    throw err;
  }
}

async function idsFor(write: WriteAttempt): Promise<string[]> {
  return (await rows<{ id: string }>("SELECT id::text AS id FROM memories WHERE tenant_id = $1 AND content = $2", [tenantId, write.body.content])).map(
    (r) => r.id,
  );
}

async function memoryCount(): Promise<number> {
  return (await rows<{ n: number }>("SELECT count(*)::int AS n FROM memories WHERE tenant_id = $1", [tenantId]))[0]!.n;
}

function printFigures(): void {
  const lines = ["", "Fault suite figures (the machine may be under shared load):", ""];
  lines.push("| fault | outage | first write after | first search after | errors during the fault (by status) |", "|---|---|---|---|---|");
  for (const r of reports) {
    const errors =
      Object.entries(r.errors)
        .map(([label, n]) => `${label}: ${n}`)
        .join(", ") || "none";
    lines.push(
      `| ${r.fault} | ${(r.downMs / 1000).toFixed(1)} s | ${(r.writeRecoveryMs / 1000).toFixed(2)} s | ${(r.searchRecoveryMs / 1000).toFixed(2)} s | ${errors} (of ${r.requests}) |`,
    );
  }
  lines.push("", JSON.stringify(figures, null, 2), "");
  console.log(lines.join("\n"));
}
