import { Counter, Gauge, type Registry } from "prom-client";
import { createEmbedder, type Embedder } from "@3ngram/embeddings";
import { createRedisQueueBackend, type QueueBackend } from "@3ngram/queue";
import { CredentialSigner } from "@3ngram/rpc";
import { composeService, createLogger, createMetricsRegistry, errorSummary, serveMetrics, type Defer, type Logger } from "@3ngram/runtime";
import { MAINTENANCE_QUEUE } from "@3ngram/schema";
import type { ConsolidatorConfig } from "./config.js";
import { createExtractor, type FactExtractor } from "./extraction/index.js";
import { OAUTH_GC_SCHEDULE } from "./jobs/oauth-gc.js";
import { REDRIVE_SCHEDULE } from "./jobs/redrive-dead-letters.js";
import { SCHEDULES as TENANT_SCAN_SCHEDULES, queueScansAtStart } from "./jobs/tenant-scans.js";
import { connectMemory, connectSearch, type ConsolidatorMemory, type ConsolidatorSearch } from "./peers.js";
import { CONSUMED_QUEUES, startWorkers } from "./queues.js";

/** Every scheduled job this service registers at start-up. */
const SCHEDULES = [...TENANT_SCAN_SCHEDULES, OAUTH_GC_SCHEDULE, REDRIVE_SCHEDULE];

/**
 * Anything passed here is used as is and left open on close (its owner closes it). Standalone
 * mode passes the in-process queue backend and the embedder it shares with the memory service.
 */
export interface ConsolidatorDeps {
  backend?: QueueBackend;
  memory?: ConsolidatorMemory;
  search?: ConsolidatorSearch;
  embedder?: Embedder;
  extractor?: FactExtractor;
  log?: Logger;
}

export interface Consolidator {
  /** Stops taking jobs, waits for running ones, then closes what this consolidator opened. */
  close(): Promise<void>;
}

/**
 * The consolidator's composition: the embedder, the peers and the queue backend (each unless
 * injected), the metrics, the workers and their schedules. close() undoes it in reverse: the
 * workers stop taking jobs and finish the running ones, then the metrics server, the backend, the
 * peers and the embedder this call opened go.
 */
export async function startConsolidator(config: ConsolidatorConfig, deps: ConsolidatorDeps = {}): Promise<Consolidator> {
  const log = deps.log ?? createLogger({ service: "consolidator", level: config.logLevel });
  return composeService(async (defer) => {
    const embedder = deps.embedder ?? (await openEmbedder(config, defer));
    const signer = deps.memory && deps.search ? undefined : await CredentialSigner.fromJwk("consolidator", config.signingJwk);
    const memory = deps.memory ?? owned(connectMemory(config.memoryAddr, signer!), defer);
    const search = deps.search ?? owned(connectSearch(config.searchAddr, signer!), defer);
    const extractor = deps.extractor ?? createExtractor(config.extractor);
    const backend =
      deps.backend ??
      owned(
        createRedisQueueBackend({
          redisUrl: config.redisUrl,
          prefix: config.redisKeyPrefix,
          onError: (err) => log.error({ error: errorSummary(err) }, "queue connection error"),
          lockDurationMs: config.jobLockMs,
        }),
        defer,
      );

    const { registry, jobs } = consolidatorMetrics(backend, log);
    // Served before the workers start, so it still answers while they drain on close.
    await serveMetrics(registry, config.metricsPort, defer);

    const workers = startWorkers({
      backend,
      deps: {
        memory,
        search,
        embedder,
        extractor,
        queue: backend.queue,
        deadLetters: backend,
        commitmentGraceMs: config.commitmentGraceMs,
        oauthClientIdleDays: config.oauthClientIdleDays,
        log,
      },
      concurrency: config.workerConcurrency,
      onOutcome: (job, outcome) => jobs.inc({ job, outcome }),
    });
    defer(() => workers.close());

    // Upserting a schedule keeps its clock, so every start (and every replica) registers the same ones.
    for (const schedule of SCHEDULES) await backend.schedule(MAINTENANCE_QUEUE, schedule);
    const atStart = await queueScansAtStart(backend.queue);
    log.info(
      {
        queues: CONSUMED_QUEUES,
        concurrency: config.workerConcurrency,
        model: embedder.model,
        extractor: extractor.name,
        schedules: SCHEDULES.map((s) => s.id),
        atStart,
        metricsPort: config.metricsPort,
      },
      "consolidator started",
    );
    return {};
  });
}

/** The embedder from config, warmed up, closed with the service when it holds anything. */
async function openEmbedder(config: ConsolidatorConfig, defer: Defer): Promise<Embedder> {
  const embedder = await createEmbedder(config.embeddings, { warmup: true });
  if (embedder.close) defer(() => embedder.close?.());
  return embedder;
}

/** Something this consolidator opened itself, closed with it. */
function owned<R extends { close(): unknown }>(resource: R, defer: Defer): R {
  defer(async () => {
    await resource.close();
  });
  return resource;
}

/** The job counter, and gauges of each consumed queue read on scrape. */
function consolidatorMetrics(backend: QueueBackend, log: Logger): { registry: Registry; jobs: Counter } {
  const registry = createMetricsRegistry("consolidator");
  const jobs = new Counter({
    name: "threengram_consolidator_jobs_total",
    help: "Job attempts by job name and outcome (failed_retryable attempts are retried while attempts remain).",
    labelNames: ["job", "outcome"],
    registers: [registry],
  });
  /** A gauge read on scrape, one series per queue and key of `read`'s answer; a scrape during a Redis outage answers without them. */
  const perQueueGauge = (name: string, help: string, label: string, read: (queue: string) => Promise<Record<string, number>>) =>
    new Gauge({
      name,
      help,
      labelNames: ["queue", label],
      registers: [registry],
      async collect() {
        for (const queue of CONSUMED_QUEUES) {
          try {
            for (const [key, value] of Object.entries(await read(queue))) this.set({ queue, [label]: key }, value);
          } catch (err) {
            log.warn({ error: errorSummary(err), queue, metric: name }, "queue counts unavailable");
          }
        }
      },
    });
  perQueueGauge("threengram_consolidator_queue_jobs", 'Jobs per queue and state; state="failed" is the dead-letter count.', "state", async (q) => ({
    ...(await backend.counts(q)),
  }));
  perQueueGauge(
    "threengram_consolidator_dead_letters",
    "Dead-lettered jobs per queue by cause (unavailable ones are re-driven every 10 minutes).",
    "cause",
    (q) => backend.deadLetters(q),
  );
  return { registry, jobs };
}
