/**
 * Operator commands on the consolidator's queues (REDIS_URL, REDIS_KEY_PREFIX):
 *   run consolidation-scan | embedding-backfill | commitment-sweep      every tenant
 *   run consolidate-tenant | backfill-tenant | sweep-tenant <tenant-id>  one tenant
 *   dead-letters                                                         dead letters per queue and cause
 *   redrive [<queue>] [--cause unavailable|permanent|error]              put dead letters back
 * `run` queues the job on the same Redis queue the schedule uses, so a running consolidator picks
 * it up, with the same retries and dead-letter handling. `redrive` gives each job a fresh set of
 * attempts; without --cause every dead letter of the queue (or of every queue) goes back.
 */
import { parseArgs } from "node:util";
import { FAILURE_CAUSES, createRedisQueueBackend, type FailureCause, type QueueBackend } from "@3ngram/queue";
import { CONSOLIDATOR_QUEUES, MAINTENANCE_QUEUE } from "@3ngram/schema";
import { BACKFILL_TENANT_JOB } from "./jobs/backfill-tenant.js";
import { CONSOLIDATE_TENANT_JOB } from "./jobs/consolidate-tenant.js";
import { SWEEP_TENANT_JOB } from "./jobs/sweep-tenant.js";
import { TENANT_JOB_RETRY_POLICY } from "./jobs/peer.js";
import { SCAN_RETRY_POLICY, TENANT_SCANS } from "./jobs/tenant-scans.js";

const PER_TENANT: readonly string[] = [CONSOLIDATE_TENANT_JOB, BACKFILL_TENANT_JOB, SWEEP_TENANT_JOB];
const USAGE = [
  `usage: cli.js run ${Object.keys(TENANT_SCANS).join(" | ")}`,
  `       cli.js run ${PER_TENANT.join(" | ")} <tenant-id>`,
  "       cli.js dead-letters",
  `       cli.js redrive [${CONSOLIDATOR_QUEUES.join(" | ")}] [--cause ${FAILURE_CAUSES.join(" | ")}]`,
].join("\n");
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Command = (backend: QueueBackend) => Promise<unknown>;

/** The command line as a command, or undefined when it is not one. */
function parse(argv: string[]): Command | undefined {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { cause: { type: "string" } }, allowPositionals: true, strict: true });
  } catch {
    return undefined; // an unknown flag or --cause without a value
  }
  const [command, ...rest] = parsed.positionals;
  const causeFlag = parsed.values.cause;
  if (causeFlag !== undefined && command !== "redrive") return undefined;
  if (command === "run") {
    const [job, tenantId] = rest;
    if (job !== undefined && Object.hasOwn(TENANT_SCANS, job) && tenantId === undefined) {
      return async (backend) => {
        await backend.queue.enqueue(MAINTENANCE_QUEUE, job, {}, { retry: SCAN_RETRY_POLICY });
        return { queued: job, queue: MAINTENANCE_QUEUE };
      };
    }
    if (job !== undefined && PER_TENANT.includes(job) && tenantId !== undefined && UUID.test(tenantId)) {
      return async (backend) => {
        await backend.queue.enqueue(MAINTENANCE_QUEUE, job, { tenantId: tenantId.toLowerCase() }, { retry: TENANT_JOB_RETRY_POLICY });
        return { queued: job, queue: MAINTENANCE_QUEUE, tenantId: tenantId.toLowerCase() };
      };
    }
    return undefined;
  }
  if (command === "dead-letters" && rest.length === 0) {
    return async (backend) => {
      const report: Record<string, unknown> = {};
      for (const queue of CONSOLIDATOR_QUEUES) report[queue] = { failed: (await backend.counts(queue)).failed, byCause: await backend.deadLetters(queue) };
      return report;
    };
  }
  if (command === "redrive") {
    if (causeFlag !== undefined && !(FAILURE_CAUSES as readonly string[]).includes(causeFlag)) return undefined;
    const cause = causeFlag as FailureCause | undefined;
    if (rest.length > 1 || (rest[0] !== undefined && !(CONSOLIDATOR_QUEUES as readonly string[]).includes(rest[0]))) return undefined;
    const queues: readonly string[] = rest[0] !== undefined ? [rest[0]] : CONSOLIDATOR_QUEUES;
    return async (backend) => {
      const redriven: Record<string, number> = {};
      for (const queue of queues) redriven[queue] = await backend.redrive(queue, cause === undefined ? {} : { cause });
      return { redriven, ...(cause !== undefined ? { cause } : {}) };
    };
  }
  return undefined;
}

const command = parse(process.argv.slice(2));
if (command === undefined) {
  console.error(USAGE);
  process.exit(2);
}

const backend = createRedisQueueBackend({
  redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  prefix: process.env.REDIS_KEY_PREFIX ?? "3ngram",
});
try {
  console.log(JSON.stringify(await command(backend)));
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
} finally {
  await backend.close();
}
