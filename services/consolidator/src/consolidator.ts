import type { Server } from "node:http";
import { Counter, Gauge } from "prom-client";
import { createEmbedder, type Embedder } from "@3ngram/embeddings";
import { memoryServices } from "@3ngram/proto/memory/v1";
import { SearchService } from "@3ngram/proto/search/v1";
import { createRedisQueueBackend, type QueueBackend } from "@3ngram/queue";
import { CredentialSigner, createRpcClient, createRpcClients } from "@3ngram/rpc";
import { createLogger, createMetricsRegistry, errorSummary, serveMetrics, type Closer, type Logger } from "@3ngram/runtime";
import { MAINTENANCE_QUEUE } from "@3ngram/schema";
import type { ConsolidatorConfig } from "./config.js";
import { createExtractor, type FactExtractor } from "./extraction/index.js";
import type { ConsolidatorMemoryClient, ConsolidatorSearchClient } from "./jobs/peer.js";
import { OAUTH_GC_SCHEDULE } from "./jobs/oauth-gc.js";
import { REDRIVE_SCHEDULE } from "./jobs/redrive-dead-letters.js";
import { SCHEDULES as TENANT_SCAN_SCHEDULES, queueScansAtStart } from "./jobs/tenant-scans.js";
import { CONSUMED_QUEUES, startWorkers } from "./queues.js";

/** Every scheduled job this service registers at start-up. */
const SCHEDULES = [...TENANT_SCAN_SCHEDULES, OAUTH_GC_SCHEDULE, REDRIVE_SCHEDULE];

/**
 * Anything passed here is used as is and left open on close (its owner closes it). Standalone
 * mode passes the in-process queue backend and the embedder it shares with the memory service.
 */
export interface ConsolidatorDeps {
  backend?: QueueBackend;
  memory?: ConsolidatorMemoryClient;
  search?: ConsolidatorSearchClient;
  embedder?: Embedder;
  extractor?: FactExtractor;
  log?: Logger;
}

export interface Consolidator {
  /** Stops taking jobs, waits for running ones, then closes what this consolidator opened. */
  close(): Promise<void>;
}

export async function startConsolidator(config: ConsolidatorConfig, deps: ConsolidatorDeps = {}): Promise<Consolidator> {
  const log = deps.log ?? createLogger({ service: "consolidator", level: config.logLevel });
  // What we opened ourselves, closed in reverse order of opening.
  const owned: Closer[] = [];
  const closeOwned = async () => {
    for (const close of owned.reverse()) await close();
  };

  try {
    let embedder = deps.embedder;
    if (!embedder) {
      const created = await createEmbedder(config.embeddings, { warmup: true });
      if (created.close) owned.push(() => created.close?.());
      embedder = created;
    }

    const signer = deps.memory && deps.search ? undefined : await CredentialSigner.fromJwk("consolidator", config.signingJwk);
    let memory = deps.memory;
    if (!memory) {
      const client = createRpcClients(memoryServices, { address: config.memoryAddr, audience: "memory", signer: signer! });
      owned.push(() => client.close());
      memory = client;
    }
    let search = deps.search;
    if (!search) {
      const client = createRpcClient(SearchService, { address: config.searchAddr, audience: "search", signer: signer! });
      owned.push(() => client.close());
      search = client;
    }
    const extractor = deps.extractor ?? createExtractor(config.extractor);

    let backend = deps.backend;
    if (!backend) {
      const created = createRedisQueueBackend({
        redisUrl: config.redisUrl,
        prefix: config.redisKeyPrefix,
        onError: (err) => log.error({ error: errorSummary(err) }, "queue connection error"),
        lockDurationMs: config.jobLockMs,
      });
      owned.push(() => created.close());
      backend = created;
    }

    const registry = createMetricsRegistry("consolidator");
    const jobs = new Counter({
      name: "threengram_consolidator_jobs_total",
      help: "Job attempts by job name and outcome (failed_retryable attempts are retried while attempts remain).",
      labelNames: ["job", "outcome"],
      registers: [registry],
    });
    const queueBackend = backend;
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
      ...(await queueBackend.counts(q)),
    }));
    perQueueGauge(
      "threengram_consolidator_dead_letters",
      "Dead-lettered jobs per queue by cause (unavailable ones are re-driven every 10 minutes).",
      "cause",
      (q) => queueBackend.deadLetters(q),
    );

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

    // Upserting a schedule keeps its clock, so every start (and every replica) registers the same ones.
    let atStart: string[];
    try {
      for (const schedule of SCHEDULES) await backend.schedule(MAINTENANCE_QUEUE, schedule);
      atStart = await queueScansAtStart(backend.queue);
    } catch (err) {
      await workers.close();
      throw err;
    }

    let server: Server | undefined;
    if (config.metricsPort > 0) {
      try {
        server = await serveMetrics(registry, config.metricsPort);
      } catch (err) {
        await workers.close();
        throw err;
      }
    }
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

    let closing: Promise<void> | undefined;
    return {
      close() {
        closing ??= (async () => {
          await workers.close();
          if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
          await closeOwned();
        })();
        return closing;
      },
    };
  } catch (err) {
    await closeOwned();
    throw err;
  }
}
