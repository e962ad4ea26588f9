/**
 * The consolidation scan for one tenant: the search service finds near-duplicate and related pairs
 * of live memories (cosine over the HNSW index, thresholds per band, bounded per run, pairs already
 * linked or ever proposed left out), this job decides which edge to propose for each, and the
 * memory service stores the proposals. Never applied automatically.
 *
 * Idempotent: the memory service stores a pair at most once, ever (open, applied or rejected), so
 * re-running the scan — on schedule, by hand, or after a crash — proposes nothing twice and never
 * brings back a pair someone rejected.
 */
import { SCOPES } from "@3ngram/rpc";
import type { Logger } from "@3ngram/runtime";
import type { ProposedEdgeType } from "@3ngram/schema";
import { callPeer, parsePayload, tenantJobSchema } from "./peer.js";
import type { ConsolidatorMemory, ConsolidatorSearch } from "../peers.js";

export const CONSOLIDATE_TENANT_JOB = "consolidate-tenant";

export interface ConsolidateTenantDeps {
  memory: Pick<ConsolidatorMemory, "proposals">;
  search: ConsolidatorSearch;
  log: Logger;
}

export type ConsolidateOutcome = "proposed" | "nothing_new";

/** What the scan reports about one pair. */
export interface PairFinding {
  newerType: string;
  olderType: string;
  similarity: number;
  /** "near_duplicate" or "related" (the search service's bands). */
  band: string;
  threshold: number;
}

/**
 * Which edge to propose for a pair, newer → older:
 * - a near duplicate of the same type restates it: supersedes (accepting closes the older one);
 * - a near duplicate of another type refines it: updates (closes it too);
 * - a related pair, or any pair with an event (an event is never replaced): extends, an advisory link.
 */
export function proposedEdge(pair: PairFinding): ProposedEdgeType | null {
  if (pair.band === "related") return "extends";
  if (pair.band !== "near_duplicate") return null;
  if (pair.newerType === "event" || pair.olderType === "event") return "extends";
  return pair.newerType === pair.olderType ? "supersedes" : "updates";
}

/** Why, in numbers and types only (a reviewer reads it; it never quotes content). */
function rationaleFor(pair: PairFinding, edge: ProposedEdgeType): string {
  const band = pair.band.replace("_", "-");
  return `cosine ${pair.similarity.toFixed(3)} >= ${band} threshold ${pair.threshold.toFixed(2)}; ${pair.newerType} -> ${pair.olderType}: ${edge}`;
}

export async function consolidateTenant(payload: unknown, deps: ConsolidateTenantDeps): Promise<ConsolidateOutcome> {
  const { tenantId } = parsePayload(CONSOLIDATE_TENANT_JOB, tenantJobSchema, payload);
  const identity = { tenantId, scopes: [SCOPES.internalConsolidate] };
  const scan = await callPeer("search", () => deps.search.search.similarPairs({}, { identity }));
  const proposals = scan.pairs.flatMap((pair) => {
    const edge = proposedEdge(pair);
    return edge ? [{ fromId: pair.newerId, toId: pair.olderId, edgeType: edge, similarity: pair.similarity, rationale: rationaleFor(pair, edge) }] : [];
  });
  if (proposals.length === 0) {
    deps.log.info({ scanned: scan.scanned, pairs: 0 }, "no similar pairs");
    return "nothing_new";
  }
  const stored = await callPeer("memory", () => deps.memory.proposals.createConsolidationProposals({ proposals }, { identity }));
  deps.log.info(
    { scanned: scan.scanned, pairs: proposals.length, proposed: stored.createdIds.length, skipped: stored.skipped },
    "consolidation proposals stored",
  );
  return stored.createdIds.length > 0 ? "proposed" : "nothing_new";
}
