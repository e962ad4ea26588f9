import { withTenant } from "@3ngram/db";
import type { DeadLetterCounts, QueueCounts } from "@3ngram/queue";
import { CONSOLIDATOR_QUEUES } from "@3ngram/schema";
import { selectPendingProposals, selectTenantStats, type PendingProposalsRow, type TenantStatsRow } from "../db/environment.js";
import { selectRetrievalPolicy, selectScopes, type RetrievalPolicyRow, type ScopeRow } from "../db/scopes.js";
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

export interface EnvironmentReport {
  embedding: { model: string; dimensions: number } | null;
  searchLegs: Array<{ leg: "vector" | "fts" | "recency"; live: boolean }>;
  queues: QueueReport[];
  scopes: ScopeRow[];
  policy: RetrievalPolicyRow;
  stats: TenantStatsRow & { pendingProposals: PendingProposalsRow };
}

/**
 * What this deployment is and what the tenant holds: the configured embedding model (its id and
 * dimension, never a URL or key), which search legs can run, the queues and their depth, the scope
 * registry with the retrieval default, and counts. Tenant counts come from one REPEATABLE READ
 * snapshot; queue depths are deployment-wide and read alongside.
 */
export async function describeEnvironment(deps: MemoryDeps, actor: Actor): Promise<EnvironmentReport> {
  const queues = Promise.all(REPORTED_QUEUES.map((name) => queueReport(deps, name)));
  const tenant = await withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId, readOnly: true, snapshot: true }, async (db) => ({
    scopes: await selectScopes(db, actor.tenantId),
    policy: await selectRetrievalPolicy(db, actor.tenantId),
    stats: { ...(await selectTenantStats(db, actor.tenantId)), pendingProposals: await selectPendingProposals(db, actor.tenantId) },
  }));
  const embedder = deps.embedder;
  return {
    embedding: embedder ? { model: embedder.model, dimensions: embedder.dimensions } : null,
    // Full text and recency need nothing but the database; the vector leg needs a query embedding.
    // Memory and search read the same EMBEDDINGS_* settings (search can only match vectors of the
    // model memory stores), so this service's embedder stands for search's: a deployment that gives
    // them different settings makes this line, and the vector leg, wrong.
    searchLegs: [
      { leg: "vector", live: embedder !== null },
      { leg: "fts", live: true },
      { leg: "recency", live: true },
    ],
    queues: await queues,
    ...tenant,
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
