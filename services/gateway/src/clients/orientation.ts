/**
 * describe_environment: the memory service's report (configuration, registry, counts) plus what
 * only the gateway knows (its tools and version), composed into the public output. Briefing and
 * handoff need no code here: they go through the bridge (memoryApi) as they are.
 */
import { COMMITMENT_STATUSES, JOB_FAILURE_CAUSES, MEMORY_TYPES, type DescribeEnvironmentOutput } from "@3ngram/schema";
import type { CallerIdentity } from "@3ngram/rpc";
import { memoryApi, type MemoryClient } from "./memory.js";

/** What the gateway knows about its own MCP surface, which describe_environment reports. */
export interface SurfaceInfo {
  tools: readonly string[];
  version: string;
}

/** Every key of `keys`, with the wire's count or 0 (the service leaves out keys with nothing to count). */
function countsFor<K extends string>(keys: readonly K[], counts: Record<string, number>): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, counts[k] ?? 0])) as Record<K, number>;
}

/** The service's report plus what only the gateway knows: its tools and version, and the totals. */
export async function describeEnvironment(memory: MemoryClient, identity: CallerIdentity, surface: SurfaceInfo): Promise<DescribeEnvironmentOutput> {
  const { embedding, searchLegs, queues, scopes, policy, stats } = await memoryApi(memory).describeEnvironment({}, { identity });
  const depths = queues
    .filter((q) => q.live)
    .map((q) => ({
      name: q.name,
      waiting: q.waiting ?? 0,
      active: q.active ?? 0,
      delayed: q.delayed ?? 0,
      failed: q.failed ?? 0,
      failedByCause: countsFor(JOB_FAILURE_CAUSES, q.failedByCause),
    }));
  const { pendingConsolidationProposals: consolidation, pendingFactProposals: fact, memoriesByType, commitmentsByStatus, ...counts } = stats;
  return {
    capabilities: {
      tools: [...surface.tools],
      toolCount: surface.tools.length,
      version: surface.version,
      embedding,
      searchLegs,
      queues: queues.map((q) => ({ name: q.name, live: q.live })),
    },
    scopes,
    retrievalScopePolicy: policy,
    stats: {
      ...counts,
      memoriesByType: countsFor(MEMORY_TYPES, memoriesByType),
      commitmentsByStatus: countsFor(COMMITMENT_STATUSES, commitmentsByStatus),
      pendingProposals: { consolidation, fact, total: consolidation + fact },
      queues: depths,
      deadLetter: depths.reduce((sum, q) => sum + q.failed, 0),
      deadLetterByCause: countsFor(
        JOB_FAILURE_CAUSES,
        Object.fromEntries(JOB_FAILURE_CAUSES.map((cause) => [cause, depths.reduce((sum, q) => sum + q.failedByCause[cause], 0)])),
      ),
    },
  };
}
