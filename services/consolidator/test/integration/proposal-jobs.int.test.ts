/**
 * The consolidator's proposal and maintenance jobs end to end: a consolidator wired exactly as in
 * production (BullMQ on the real Redis, gRPC clients of the real memory and search services, built
 * from its config) against PostgreSQL + pgvector. Outcomes are read from the database, the queues,
 * Redis and the consolidator's /metrics.
 */
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MemoryType as MemoryTypeName } from "@3ngram/schema";
import type { RunningMemoryService } from "@3ngram/memory";
import { createRedisQueueBackend, type QueueBackend, type QueueCounts } from "@3ngram/queue";
import { createLogger, loadConfig } from "@3ngram/runtime";
import { EXTRACTION_QUEUE, EXTRACT_FACTS_JOB, MAINTENANCE_QUEUE } from "@3ngram/schema";
import { reader, writer } from "../../../../test/support/calls.js";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { TEST_REDIS_URL, deleteKeyPrefix, uniqueKeyPrefix } from "../../../../test/support/database.js";
import { eventually, freePort } from "../../../../test/support/processes.js";
import { consolidatorConfigSchema, startConsolidator, type Consolidator } from "../../src/index.js";
import { BACKFILL_TENANT_JOB } from "../../src/jobs/backfill-tenant.js";
import { CONSOLIDATE_TENANT_JOB, proposedEdge } from "../../src/jobs/consolidate-tenant.js";
import { OAUTH_GC_EVERY_MS, OAUTH_GC_JOB } from "../../src/jobs/oauth-gc.js";
import { REDRIVE_DEAD_LETTERS_JOB, REDRIVE_EVERY_MS } from "../../src/jobs/redrive-dead-letters.js";
import { SWEEP_TENANT_JOB } from "../../src/jobs/sweep-tenant.js";
import { COMMITMENT_SWEEP_JOB, CONSOLIDATION_SCAN_JOB, TENANT_SCANS } from "../../src/jobs/tenant-scans.js";
import { startMemoryOn } from "../real-memory.js";

type Tenant = { tenantId: string; userId: string; apiKey: string };

const log = createLogger({ service: "consolidator", level: process.env.TEST_LOG_LEVEL ?? "silent" });
const idle: QueueCounts = { waiting: 0, active: 0, delayed: 0, failed: 0 };

let stack: CoreServices;
let consolidator: Consolidator;
let producer: QueueBackend;
let metricsPort: number;

function configFor(env: Record<string, string>) {
  return loadConfig(consolidatorConfigSchema, {
    SERVICE_SIGNING_JWK: stack.keys.signingJwk,
    REDIS_URL: TEST_REDIS_URL,
    EMBEDDINGS_PROVIDER: "hashing",
    EMBEDDINGS_DIMENSIONS: "512",
    JOB_LOCK_MS: "5000",
    ...env,
  });
}

/** The consolidator's own count of attempts of `job` that ended with `outcome`, from /metrics. */
async function jobsTotal(port: number, job: string, outcome: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text
    .split("\n")
    .find((l) => l.startsWith("threengram_consolidator_jobs_total{") && l.includes(`job="${job}"`) && l.includes(`outcome="${outcome}"`));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
}

async function remember(t: Tenant, fields: { memoryType: MemoryTypeName; topic: string; content: string; dueAt?: string }) {
  const memory = await stack.publicMemoryClient();
  const stored = await memory.memories.remember(fields, writer(t));
  return stored.memory!.id;
}

async function ownerRows<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  return (await stack.ownerPool.query(sql, params)).rows as T[];
}

beforeAll(async () => {
  stack = await startCoreServices({ label: "proposaljobs" });
  metricsPort = await freePort();
  consolidator = await startConsolidator(
    configFor({
      REDIS_KEY_PREFIX: stack.redisPrefix,
      MEMORY_ADDR: stack.memoryAddress,
      SEARCH_ADDR: stack.searchAddress,
      METRICS_PORT: String(metricsPort),
      COMMITMENT_EXPIRY_GRACE_HOURS: "0",
    }),
    { log },
  );
  producer = createRedisQueueBackend({ redisUrl: TEST_REDIS_URL, prefix: stack.redisPrefix });
});

afterAll(async () => {
  await consolidator?.close();
  await producer?.close();
  await stack?.close();
});

describe("the consolidator's schedules", () => {
  it("registers the scan, backfill, sweep, OAuth GC and dead-letter re-drive in Redis, each at its next interval boundary", async () => {
    const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      // RESP2 answers a flat [member, score, …] list, RESP3 a list of pairs: flatten either way.
      const entries = (
        (await redis.call("ZRANGE", `${stack.redisPrefix}:${MAINTENANCE_QUEUE}:repeat`, "0", "-1", "WITHSCORES")) as unknown[]
      ).flat() as string[];
      const next = Object.fromEntries(Array.from({ length: entries.length / 2 }, (_, i) => [entries[2 * i]!, Number(entries[2 * i + 1])]));
      expect(Object.keys(next).sort()).toEqual([...Object.keys(TENANT_SCANS), OAUTH_GC_JOB, REDRIVE_DEAD_LETTERS_JOB].sort());
      for (const [name, scan] of [
        ...Object.entries(TENANT_SCANS),
        [OAUTH_GC_JOB, { everyMs: OAUTH_GC_EVERY_MS }] as const,
        [REDRIVE_DEAD_LETTERS_JOB, { everyMs: REDRIVE_EVERY_MS }] as const,
      ]) {
        expect(next[name]! % scan.everyMs, name).toBe(0);
        expect(next[name]!).toBeGreaterThan(Date.now() - scan.everyMs);
      }
      expect(TENANT_SCANS[CONSOLIDATION_SCAN_JOB].everyMs).toBe(3_600_000);
      expect(TENANT_SCANS[COMMITMENT_SWEEP_JOB].everyMs).toBe(900_000);
    } finally {
      redis.disconnect();
    }
  });
});

describe("fact extraction", () => {
  it("proposes the facts of every remembered memory, and a repeat of the job proposes nothing new", async () => {
    const tenant = await stack.createTenant("extraction");
    const lift = await remember(tenant, { memoryType: "fact", topic: "Back squat", content: "Top set 98 kg today." });
    const prose = await remember(tenant, { memoryType: "decision", topic: "payments", content: "We picked Stripe for card payments." });
    await eventually(async () => {
      const rows = await ownerRows<{ memory_id: string; subject: string; predicate: string; value: string; extractor: string }>(
        "SELECT memory_id, subject, predicate, value, extractor FROM fact_proposals WHERE tenant_id = $1",
        [tenant.tenantId],
      );
      expect(rows).toEqual([{ memory_id: lift, subject: "back_squat", predicate: "top_set.weight_kg", value: "98", extractor: "rules/1" }]);
    }, 20_000);
    await eventually(async () => expect(await producer.counts(EXTRACTION_QUEUE)).toEqual(idle));
    const noFacts = await jobsTotal(metricsPort, EXTRACT_FACTS_JOB, "no_facts");
    expect(noFacts).toBeGreaterThanOrEqual(1);

    const before = await jobsTotal(metricsPort, EXTRACT_FACTS_JOB, "already_proposed");
    await producer.queue.enqueue(EXTRACTION_QUEUE, EXTRACT_FACTS_JOB, { tenantId: tenant.tenantId, memoryId: lift });
    await eventually(async () => expect(await jobsTotal(metricsPort, EXTRACT_FACTS_JOB, "already_proposed")).toBe(before + 1));
    expect(await ownerRows("SELECT 1 FROM fact_proposals WHERE memory_id = $1", [lift])).toHaveLength(1);
    expect(await ownerRows("SELECT 1 FROM fact_proposals WHERE memory_id = $1", [prose])).toHaveLength(0);
  });
});

describe("the consolidation scan", () => {
  it("picks the edge by band and types: supersedes, updates, extends", () => {
    const pair = (band: string, newerType: string, olderType: string) => ({ band, newerType, olderType, similarity: 0.95, threshold: 0.92 });
    expect(proposedEdge(pair("near_duplicate", "decision", "decision"))).toBe("supersedes");
    expect(proposedEdge(pair("near_duplicate", "note", "decision"))).toBe("updates");
    expect(proposedEdge(pair("near_duplicate", "event", "event"))).toBe("extends");
    expect(proposedEdge(pair("related", "decision", "decision"))).toBe("extends");
    expect(proposedEdge(pair("unheard_of", "decision", "decision"))).toBeNull();
  });

  it("visits every tenant and proposes each similar pair once, however often it runs", async () => {
    const tenant = await stack.createTenant("consolidation");
    const older = await remember(tenant, {
      memoryType: "decision",
      topic: "payments provider",
      content: "We decided to use Stripe for card payments in the EU launch.",
    });
    const newer = await remember(tenant, {
      memoryType: "decision",
      topic: "payments provider",
      content: "We decided to use Stripe for all card payments in the EU launch.",
    });
    await remember(tenant, { memoryType: "note", topic: "standup", content: "The daily standup moved to 9:30." });
    const proposals = () =>
      ownerRows<{ from_id: string; to_id: string; edge_type: string; status: string; rationale: string }>(
        "SELECT from_id, to_id, edge_type, status, rationale FROM consolidation_proposals WHERE tenant_id = $1",
        [tenant.tenantId],
      );

    const scans = await jobsTotal(metricsPort, CONSOLIDATION_SCAN_JOB, "fanned_out");
    await producer.queue.enqueue(MAINTENANCE_QUEUE, CONSOLIDATION_SCAN_JOB, {});
    await eventually(async () => expect(await proposals()).toHaveLength(1), 20_000);
    const [proposal] = await proposals();
    expect(proposal).toMatchObject({ from_id: newer, to_id: older, edge_type: "supersedes", status: "proposed" });
    expect(proposal!.rationale).toMatch(/^cosine 0\.9\d\d >= near-duplicate threshold 0\.92; decision -> decision: supersedes$/);
    // Nothing waiting, running or dead-lettered (the schedules' next runs are the delayed jobs).
    await eventually(async () => expect(await producer.counts(MAINTENANCE_QUEUE)).toMatchObject({ waiting: 0, active: 0, failed: 0 }));
    expect(await jobsTotal(metricsPort, CONSOLIDATION_SCAN_JOB, "fanned_out")).toBe(scans + 1);

    // Reject it and run again, twice: the pair is never proposed again.
    const memory = await stack.memoryClient();
    const listed = await memory.proposals.listProposals({}, reader(tenant));
    await memory.proposals.rejectProposal({ proposalId: listed.proposals[0]!.id }, writer(tenant));
    const nothingNew = await jobsTotal(metricsPort, CONSOLIDATE_TENANT_JOB, "nothing_new");
    for (let run = 0; run < 2; run++) await producer.queue.enqueue(MAINTENANCE_QUEUE, CONSOLIDATE_TENANT_JOB, { tenantId: tenant.tenantId });
    await eventually(async () => expect(await jobsTotal(metricsPort, CONSOLIDATE_TENANT_JOB, "nothing_new")).toBe(nothingNew + 2));
    expect(await proposals()).toEqual([expect.objectContaining({ status: "rejected" })]);
  });
});

describe("embedding backfill", () => {
  it("embeds what is missing or stale through StoreEmbedding, once", async () => {
    const tenant = await stack.createTenant("backfill");
    const missing = await remember(tenant, { memoryType: "note", topic: "a", content: "Stored while the model was down." });
    const stale = await remember(tenant, { memoryType: "note", topic: "b", content: "Embedded by a model we retired." });
    const current = await remember(tenant, { memoryType: "note", topic: "c", content: "Embedded by the current model." });
    await stack.ownerPool.query("UPDATE memories SET embedding = NULL, embedding_model = NULL, embedding_dim = NULL WHERE id = $1", [missing]);
    await stack.ownerPool.query("UPDATE memories SET embedding_model = 'retired-model' WHERE id = $1", [stale]);
    const embedDone = () =>
      ownerRows<{ memory_id: string; n: number }>(
        "SELECT memory_id, count(*)::int AS n FROM memory_events WHERE tenant_id = $1 AND event_kind = 'embed_done' GROUP BY memory_id",
        [tenant.tenantId],
      );

    const backfilled = await jobsTotal(metricsPort, BACKFILL_TENANT_JOB, "backfilled");
    await producer.queue.enqueue(MAINTENANCE_QUEUE, BACKFILL_TENANT_JOB, { tenantId: tenant.tenantId });
    await eventually(async () => expect(await jobsTotal(metricsPort, BACKFILL_TENANT_JOB, "backfilled")).toBe(backfilled + 1));
    const models = await ownerRows<{ id: string; embedding_model: string }>("SELECT id, embedding_model FROM memories WHERE tenant_id = $1", [tenant.tenantId]);
    expect(new Set(models.map((m) => m.embedding_model))).toEqual(new Set(["hashing-512"]));
    expect((await embedDone()).sort((a, b) => a.memory_id.localeCompare(b.memory_id))).toEqual(
      [missing, stale].sort().map((memory_id) => ({ memory_id, n: 1 })),
    );

    const idleRuns = await jobsTotal(metricsPort, BACKFILL_TENANT_JOB, "nothing_pending");
    await producer.queue.enqueue(MAINTENANCE_QUEUE, BACKFILL_TENANT_JOB, { tenantId: tenant.tenantId });
    await eventually(async () => expect(await jobsTotal(metricsPort, BACKFILL_TENANT_JOB, "nothing_pending")).toBe(idleRuns + 1));
    expect((await embedDone()).map((r) => r.n)).toEqual([1, 1]);
    expect((await embedDone()).map((r) => r.memory_id)).not.toContain(current);
  });

  it("goes on from run to run by itself until a tenant larger than one run is re-embedded, each memory once", async () => {
    const tenant = await stack.createTenant("backfill chain");
    const memory = await stack.publicMemoryClient();
    const total = 230; // more than one run looks at (160), so the first run queues the next
    for (let i = 0; i < total; i += 10) {
      await Promise.all(
        Array.from({ length: 10 }, (_, j) =>
          memory.memories.remember({ memoryType: "note", topic: `chain ${i + j}`, content: `Chained memory number ${i + j}.` }, writer(tenant)),
        ),
      );
    }
    // Vectors of a model this deployment no longer runs, as after a model change.
    await stack.ownerPool.query("UPDATE memories SET embedding_model = 'retired-model' WHERE tenant_id = $1", [tenant.tenantId]);

    const continued = await jobsTotal(metricsPort, BACKFILL_TENANT_JOB, "continued");
    const backfilled = await jobsTotal(metricsPort, BACKFILL_TENANT_JOB, "backfilled");
    await producer.queue.enqueue(MAINTENANCE_QUEUE, BACKFILL_TENANT_JOB, { tenantId: tenant.tenantId });
    await eventually(async () => expect(await jobsTotal(metricsPort, BACKFILL_TENANT_JOB, "backfilled")).toBe(backfilled + 1), 30_000);
    expect(await jobsTotal(metricsPort, BACKFILL_TENANT_JOB, "continued")).toBe(continued + 1);
    const models = await ownerRows<{ model: string; n: number }>(
      "SELECT embedding_model AS model, count(*)::int AS n FROM memories WHERE tenant_id = $1 GROUP BY embedding_model",
      [tenant.tenantId],
    );
    expect(models).toEqual([{ model: "hashing-512", n: total }]);
    // One stored vector per memory: no run re-embedded what an earlier one had done.
    const perMemory = await ownerRows<{ n: number }>(
      "SELECT count(*)::int AS n FROM memory_events WHERE tenant_id = $1 AND event_kind = 'embed_done' GROUP BY memory_id",
      [tenant.tenantId],
    );
    expect(perMemory).toEqual(Array.from({ length: total }, () => ({ n: 1 })));
  });
});

describe("commitment sweep", () => {
  it("expires overdue live commitments through the memory service, recorded as the worker", async () => {
    const tenant = await stack.createTenant("sweep");
    const overdue = await remember(tenant, {
      memoryType: "commitment",
      topic: "report",
      content: "Send the audit report.",
      dueAt: new Date(Date.now() - 86_400_000).toISOString(),
    });
    const upcoming = await remember(tenant, {
      memoryType: "commitment",
      topic: "review",
      content: "Review the contract.",
      dueAt: new Date(Date.now() + 86_400_000).toISOString(),
    });
    const swept = await jobsTotal(metricsPort, SWEEP_TENANT_JOB, "expired");
    await producer.queue.enqueue(MAINTENANCE_QUEUE, COMMITMENT_SWEEP_JOB, {});
    await eventually(async () => expect(await jobsTotal(metricsPort, SWEEP_TENANT_JOB, "expired")).toBe(swept + 1));
    const statuses = await ownerRows<{ memory_id: string; status: string }>("SELECT memory_id, status FROM commitments WHERE tenant_id = $1", [
      tenant.tenantId,
    ]);
    expect(Object.fromEntries(statuses.map((s) => [s.memory_id, s.status]))).toEqual({ [overdue]: "expired", [upcoming]: "open" });
    const events = await ownerRows<{ actor: string }>("SELECT actor_kind AS actor FROM memory_events WHERE memory_id = $1 AND event_kind = 'status_change'", [
      overdue,
    ]);
    expect(events).toEqual([{ actor: "worker" }]);
  });
});

describe("retries", () => {
  it("a job that fails twice (memory service down) then succeeds is retried and applied exactly once", async () => {
    // A stack of its own whose automatic jobs nobody consumes, so only the job below proposes anything.
    const own = await startCoreServices({ label: "retries" });
    const tenant = await own.createTenant("retries");
    const memory = await own.publicMemoryClient();
    const memoryId = (await memory.memories.remember({ memoryType: "fact", topic: "Deadlift", content: "Top set 180 kg." }, writer(tenant))).memory!.id;
    // The consolidator under test points at a port where the memory service is not (yet).
    const prefix = uniqueKeyPrefix("retries");
    const port = await freePort();
    const ownMetrics = await freePort();
    const flaky = await startConsolidator(
      loadConfig(consolidatorConfigSchema, {
        SERVICE_SIGNING_JWK: own.keys.signingJwk,
        REDIS_URL: TEST_REDIS_URL,
        REDIS_KEY_PREFIX: prefix,
        MEMORY_ADDR: `127.0.0.1:${port}`,
        SEARCH_ADDR: own.searchAddress,
        METRICS_PORT: String(ownMetrics),
        EMBEDDINGS_PROVIDER: "hashing",
        EMBEDDINGS_DIMENSIONS: "512",
      }),
      { log },
    );
    const queue = createRedisQueueBackend({ redisUrl: TEST_REDIS_URL, prefix });
    const proposals = () =>
      own.ownerPool.query<{ predicate: string; value: string }>("SELECT predicate, value FROM fact_proposals WHERE memory_id = $1", [memoryId]);
    let late: RunningMemoryService | undefined;
    try {
      // Backoff doubles from 3 s: the third attempt comes 6 s after the second failure, long after
      // the memory service below is up (it is started only once two attempts have failed).
      await queue.queue.enqueue(EXTRACTION_QUEUE, EXTRACT_FACTS_JOB, { tenantId: tenant.tenantId, memoryId }, { retry: { attempts: 5, backoffMs: 3_000 } });
      await eventually(async () => expect(await jobsTotal(ownMetrics, EXTRACT_FACTS_JOB, "failed_unavailable")).toBe(2), 20_000);
      expect((await proposals()).rows).toEqual([]);

      late = await startMemoryOn(own, port);
      await eventually(async () => expect(await jobsTotal(ownMetrics, EXTRACT_FACTS_JOB, "proposed")).toBe(1), 30_000);
      await eventually(async () => expect(await queue.counts(EXTRACTION_QUEUE)).toEqual(idle));
      expect(await jobsTotal(ownMetrics, EXTRACT_FACTS_JOB, "failed_unavailable")).toBe(2);
      expect(await jobsTotal(ownMetrics, EXTRACT_FACTS_JOB, "failed_permanent")).toBe(0);
      expect((await proposals()).rows).toEqual([{ predicate: "top_set.weight_kg", value: "180" }]);
    } finally {
      await flaky.close();
      await queue.close();
      await late?.close();
      await own.close();
      await deleteKeyPrefix(prefix);
    }
  }, 90_000);
});
