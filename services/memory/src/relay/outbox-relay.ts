/**
 * The outbox relay: moves jobs that writes recorded in job_outbox onto the queue, oldest first,
 * at least once. A row is marked relayed only after the queue accepted its job; a relay that dies
 * in between sends it again, which the queue's deduplication id and the jobs' own idempotency
 * absorb. While the queue (Redis) is down the relay backs off and the outbox grows; it drains on
 * its own once the queue answers. Relayed rows are kept a day, then removed with expired
 * idempotency keys.
 */
import { withRole, type Pool } from "@3ngram/db";
import { withTraceCarrier, type JobQueue } from "@3ngram/queue";
import { errorSummary, type Logger } from "@3ngram/runtime";
import { Counter, Gauge, type Registry } from "prom-client";
import { HOUSEKEEPING_SETTINGS } from "../db/housekeeping.js";
import { pruneExpiredIdempotencyKeys } from "../db/idempotency.js";
import { claimPendingOutboxJobs, markOutboxJobsRelayed, pruneRelayedOutboxJobs, selectOutboxBacklog } from "../db/outbox.js";
import { IDEMPOTENCY_KEY_RETENTION_MS } from "../domain/idempotency.js";
import { JOB_RETRY_POLICIES } from "../domain/memory-jobs.js";

export interface OutboxRelayOptions {
  pool: Pool;
  role: string;
  queue: JobQueue;
  log: Logger;
  /** Where the backlog gauges and the relayed counter live; omit to not measure. */
  registry?: Registry;
  /** Jobs moved per transaction. */
  batchSize?: number;
  /** How often an idle relay looks for rows written by other replicas (its own writes wake it at once). */
  idleMs?: number;
}

const DEFAULT_BATCH_SIZE = 100;
const DEFAULT_IDLE_MS = 1_000;
/** After a failure (queue or database away) the relay waits 250 ms, doubling up to this. */
const MAX_BACKOFF_MS = 5_000;
/** Relayed rows are the record of what was sent; a day of them is plenty. */
const RELAYED_RETENTION_MS = 24 * 60 * 60_000;
const PRUNE_EVERY_MS = 60 * 60_000;

export class OutboxRelay {
  private readonly batchSize: number;
  private readonly idleMs: number;
  private readonly relayed: Counter | undefined;
  private stopped = false;
  private failures = 0;
  private wake: (() => void) | undefined;
  /** A write recorded jobs while a batch was in hand: look again at once. */
  private kicked = false;
  private loop: Promise<void> | undefined;
  private lastPrune = 0;

  constructor(private readonly options: OutboxRelayOptions) {
    this.batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    this.idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
    const registry = options.registry;
    if (registry) {
      this.relayed = new Counter({ name: "threengram_outbox_relayed_total", help: "Jobs the outbox relay handed to the queue.", registers: [registry] });
      const backlog = { at: 0, value: Promise.resolve({ pending: 0, oldestSeconds: 0 }) };
      // One query per scrape feeds both gauges.
      const readBacklog = () => {
        if (Date.now() - backlog.at > 500) {
          backlog.at = Date.now();
          backlog.value = this.backlog();
        }
        return backlog.value;
      };
      new Gauge({
        name: "threengram_outbox_pending_jobs",
        help: "Jobs written to the outbox and not yet handed to the queue.",
        registers: [registry],
        async collect() {
          this.set((await readBacklog().catch(() => ({ pending: Number.NaN }))).pending);
        },
      });
      new Gauge({
        name: "threengram_outbox_oldest_pending_seconds",
        help: "Age of the oldest job still waiting in the outbox (0 when none waits).",
        registers: [registry],
        async collect() {
          this.set((await readBacklog().catch(() => ({ oldestSeconds: Number.NaN }))).oldestSeconds);
        },
      });
    }
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** A write just recorded jobs: relay now rather than at the next idle tick (unless backing off). */
  kick(): void {
    if (this.failures > 0) return;
    this.kicked = true;
    this.wake?.();
  }

  /** Stops after the batch in hand; pending rows stay for the next start (or another replica). */
  async close(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }

  /** Pending jobs and the oldest one's age. */
  backlog(): Promise<{ pending: number; oldestSeconds: number }> {
    return withRole(this.options.pool, this.options.role, (db) => selectOutboxBacklog(db), { settings: HOUSEKEEPING_SETTINGS });
  }

  /** Moves one batch; resolves to how many jobs the queue accepted and whether it refused one. */
  async relayBatch(): Promise<{ relayed: number; refused: boolean }> {
    const { pool, role, queue, log } = this.options;
    return withRole(
      pool,
      role,
      async (db) => {
        const jobs = await claimPendingOutboxJobs(db, this.batchSize);
        const done: string[] = [];
        let refused = false;
        for (const job of jobs) {
          try {
            // Queued inside the recording write's trace, so the job's spans continue it.
            await withTraceCarrier(job.traceContext ?? undefined, () =>
              queue.enqueue(job.queue, job.jobName, job.payload, {
                jobId: job.jobId,
                ...(JOB_RETRY_POLICIES[job.jobName] ? { retry: JOB_RETRY_POLICIES[job.jobName] } : {}),
              }),
            );
            done.push(job.id);
          } catch (err) {
            // The queue is away: keep this row and the rest for the next attempt.
            log.warn({ error: errorSummary(err), pending: jobs.length - done.length }, "outbox relay: queue refused a job; will retry");
            refused = true;
            break;
          }
        }
        await markOutboxJobsRelayed(db, done);
        return { relayed: done.length, refused };
      },
      { readOnly: false, settings: HOUSEKEEPING_SETTINGS },
    );
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let delay = this.idleMs;
      this.kicked = false;
      try {
        const { relayed, refused } = await this.relayBatch();
        this.relayed?.inc(relayed);
        this.failures = refused ? this.failures + 1 : 0;
        if (refused) delay = this.backoff();
        else if (relayed === this.batchSize || this.kicked) delay = 0;
        if (Date.now() - this.lastPrune >= PRUNE_EVERY_MS) {
          this.lastPrune = Date.now();
          await this.pruneExpired();
        }
      } catch (err) {
        this.failures += 1;
        delay = this.backoff();
        this.options.log.warn({ error: errorSummary(err), failures: this.failures }, "outbox relay: database unavailable; will retry");
      }
      if (delay > 0 && !this.stopped) await this.sleep(delay);
    }
  }

  private backoff(): number {
    return Math.min(MAX_BACKOFF_MS, 250 * 2 ** Math.min(this.failures - 1, 10));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }

  /** Removes relayed rows older than a day and idempotency keys past retention (the loop runs it hourly). */
  async pruneExpired(): Promise<{ jobs: number; keys: number }> {
    const { pool, role, log } = this.options;
    const removed = await withRole(
      pool,
      role,
      async (db) => ({
        jobs: await pruneRelayedOutboxJobs(db, RELAYED_RETENTION_MS),
        keys: await pruneExpiredIdempotencyKeys(db, IDEMPOTENCY_KEY_RETENTION_MS),
      }),
      { readOnly: false, settings: HOUSEKEEPING_SETTINGS },
    );
    if (removed.jobs > 0 || removed.keys > 0) log.info(removed, "housekeeping: relayed jobs and expired idempotency keys removed");
    return removed;
  }
}
