import { withTenant } from "@3ngram/db";
import type { DeadLetterCounts, QueueCounts } from "@3ngram/queue";
import { COMMITMENT_STATUSES, CONSOLIDATOR_QUEUES, JOB_FAILURE_CAUSES, MEMORY_TYPES } from "@3ngram/schema";
import { selectPendingProposals, selectTenantStats } from "../db/environment.js";
import { selectRetrievalPolicy, selectScopes } from "../db/scopes.js";
import type { Actor, MemoryDeps } from "./deps.js";

/** The background queues this deployment runs (all consumed by the consolidator), in the order they are reported. */
const REPORTED_QUEUES: readonly string[] = CONSOLIDATOR_QUEUES;

/** A queue that does not answer within this long is reported as not live (describe never waits on a Redis outage). */
const QUEUE_COUNTS_TIMEOUT_MS = 1_000;

interface QueueReport {
  name: string;
  /** Counts are present only when the backend answered. */
  counts: QueueCounts | null;
  deadLetters: DeadLetterCounts | null;
}

/** Every key of `keys` in their order, with its count or 0 (the database leaves out keys with nothing to count). */
function countsFor<K extends string>(keys: readonly K[], counts: Partial<Record<string, number>>): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, counts[k] ?? 0])) as Record<K, number>;
}

/**
 * What this deployment is and what the tenant holds: the configured embedding model (its id and
 * dimension, never a URL or key), which search legs can run, the queues and their depth, the scope
 * registry with the retrieval default, and complete counts (every type, status and cause, zero or
 * not; the totals; how many live memories carry the configured model's vector). Tenant counts come
 * from one REPEATABLE READ snapshot; queue depths are deployment-wide and read alongside.
 */
export async function describeEnvironment(deps: MemoryDeps, actor: Actor) {
  const queues = Promise.all(REPORTED_QUEUES.map((name) => queueReport(deps, name)));
  const tenant = await withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId, readOnly: true, snapshot: true }, async (db) => ({
    scopes: await selectScopes(db, actor.tenantId),
    retrievalScopePolicy: await selectRetrievalPolicy(db, actor.tenantId),
    counts: await selectTenantStats(db, actor.tenantId, deps.embedder?.model ?? null),
    pending: await selectPendingProposals(db, actor.tenantId),
  }));
  const { counts: stats, pending, ...registry } = tenant;
  const { embeddedByModel, ...counts } = stats;
  const reports = await queues;
  const depths = reports.flatMap(({ name, counts: c, deadLetters }) =>
    c === null
      ? []
      : [{ name, waiting: c.waiting, active: c.active, delayed: c.delayed, failed: c.failed, failedByCause: countsFor(JOB_FAILURE_CAUSES, deadLetters ?? {}) }],
  );
  const embedder = deps.embedder;
  return {
    capabilities: {
      embedding: embedder ? { model: embedder.model, dimensions: embedder.dimensions } : null,
      // Full text and recency need nothing but the database; the vector leg needs a query embedding.
      // Memory and search read the same EMBEDDINGS_* settings (search can only match vectors of the
      // model memory stores), so this service's embedder stands for search's: a deployment that gives
      // them different settings makes this line, and the vector leg, wrong.
      searchLegs: [
        { leg: "vector" as const, live: embedder !== null },
        { leg: "fts" as const, live: true },
        { leg: "recency" as const, live: true },
      ],
      queues: reports.map((q) => ({ name: q.name, live: q.counts !== null })),
    },
    ...registry,
    stats: {
      ...counts,
      memoriesByType: countsFor(MEMORY_TYPES, counts.memoriesByType),
      commitmentsByStatus: countsFor(COMMITMENT_STATUSES, counts.commitmentsByStatus),
      // Every live memory without the configured model's vector is pending: after a model change the
      // consolidator re-embeds them in the background (jobs/backfill-tenant.ts there).
      embeddings: embedder
        ? { model: embedder.model, dimensions: embedder.dimensions, embedded: embeddedByModel, pending: counts.activeMemories - embeddedByModel }
        : null,
      pendingProposals: { ...pending, total: pending.consolidation + pending.fact },
      queues: depths,
      deadLetter: depths.reduce((sum, q) => sum + q.failed, 0),
      deadLetterByCause: countsFor(
        JOB_FAILURE_CAUSES,
        Object.fromEntries(JOB_FAILURE_CAUSES.map((cause) => [cause, depths.reduce((sum, q) => sum + q.failedByCause[cause], 0)])),
      ),
    },
  };
}

async function queueReport(deps: MemoryDeps, name: string): Promise<QueueReport> {
  const { queueCounts, deadLetters } = deps;
  if (!queueCounts) return { name, counts: null, deadLetters: null };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), QUEUE_COUNTS_TIMEOUT_MS);
  });
  try {
    const read = Promise.all([queueCounts(name), deadLetters ? deadLetters(name) : null]);
    const answered = await Promise.race([read, timeout]);
    return answered === null ? { name, counts: null, deadLetters: null } : { name, counts: answered[0], deadLetters: answered[1] };
  } catch {
    deps.log.warn({ queue: name }, "queue counts unavailable");
    return { name, counts: null, deadLetters: null };
  } finally {
    clearTimeout(timer);
  }
}
