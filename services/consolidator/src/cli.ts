/**
 * Operator commands: run a consolidator job now instead of waiting for its schedule.
 *   run consolidation-scan | embedding-backfill | commitment-sweep      every tenant
 *   run consolidate-tenant | backfill-tenant | sweep-tenant <tenant-id>  one tenant
 * The job is queued on the same Redis queue the schedule uses (REDIS_URL, REDIS_KEY_PREFIX), so a
 * running consolidator picks it up, with the same retries and dead-letter handling.
 */
import { createRedisQueueBackend } from "@3ngram/queue";
import { MAINTENANCE_QUEUE } from "@3ngram/schema";
import { BACKFILL_TENANT_JOB } from "./jobs/backfill-tenant.js";
import { CONSOLIDATE_TENANT_JOB } from "./jobs/consolidate-tenant.js";
import { SWEEP_TENANT_JOB } from "./jobs/sweep-tenant.js";
import { SCAN_RETRY_POLICY, TENANT_JOB_RETRY_POLICY, TENANT_SCANS } from "./jobs/tenant-scans.js";

const USAGE = `usage: cli.js run ${Object.keys(TENANT_SCANS).join(" | ")}\n       cli.js run ${[CONSOLIDATE_TENANT_JOB, BACKFILL_TENANT_JOB, SWEEP_TENANT_JOB].join(" | ")} <tenant-id>`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const [command, job, tenantId] = process.argv.slice(2);
const perTenant: readonly string[] = [CONSOLIDATE_TENANT_JOB, BACKFILL_TENANT_JOB, SWEEP_TENANT_JOB];
const scan = job !== undefined && Object.hasOwn(TENANT_SCANS, job);
if (command !== "run" || job === undefined || (!scan && !(perTenant.includes(job) && tenantId !== undefined && UUID.test(tenantId)))) {
  console.error(USAGE);
  process.exit(2);
}

const backend = createRedisQueueBackend({
  redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  prefix: process.env.REDIS_KEY_PREFIX ?? "3ngram",
});
try {
  if (scan) {
    await backend.queue.enqueue(MAINTENANCE_QUEUE, job, {}, { retry: SCAN_RETRY_POLICY });
  } else {
    await backend.queue.enqueue(MAINTENANCE_QUEUE, job, { tenantId: tenantId!.toLowerCase() }, { retry: TENANT_JOB_RETRY_POLICY });
  }
  console.log(JSON.stringify({ queued: job, queue: MAINTENANCE_QUEUE, ...(scan ? {} : { tenantId: tenantId!.toLowerCase() }) }));
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
} finally {
  await backend.close();
}
