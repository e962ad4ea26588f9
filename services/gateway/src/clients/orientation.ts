/**
 * briefing, handoff and describe_environment ↔ memory.Briefing / Handoff / DescribeEnvironment:
 * the one mapping between the public shapes and the wire for orientation reads. Absent optional
 * fields stay absent on the wire; outputs are parsed strictly with the shared schemas.
 */
import { AppError } from "@3ngram/errors";
import type {
  BriefingCommitment,
  BriefingCommitmentSection,
  BriefingMemory,
  BriefingMemorySection,
  BriefingResponse,
  ChangeCounts,
  DescribeEnvironmentResponse,
  HandoffChanges,
  HandoffCommitment,
  HandoffMemory,
  HandoffResponse,
  MemoryService,
  OrientationSelector,
  OrientationSelectorSchema,
} from "@3ngram/proto/memory/v1";
import { RetrievalPolicySchema, ScopeSchema } from "@3ngram/proto/memory/v1";
import { fromWire } from "@3ngram/rpc";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import {
  COMMITMENT_STATUSES,
  JOB_FAILURE_CAUSES,
  MEMORY_TYPES,
  briefingOutputSchema,
  describeEnvironmentOutputSchema,
  effectiveSelectorSchema,
  handoffOutputSchema,
  retrievalPolicySchema,
  scopeRecordSchema,
  type BriefingInput,
  type BriefingOutput,
  type DescribeEnvironmentOutput,
  type EffectiveSelector,
  type HandoffInput,
  type HandoffOutput,
  type Selector,
} from "@3ngram/schema";
import { isoTime, isoTimeOrNull } from "./timestamps.js";

type BriefingRequestInit = MessageInitShape<(typeof MemoryService)["method"]["briefing"]["input"]>;
type HandoffRequestInit = MessageInitShape<(typeof MemoryService)["method"]["handoff"]["input"]>;

/** What the gateway knows about its own MCP surface, which describe_environment reports. */
export interface SurfaceInfo {
  tools: readonly string[];
  version: string;
}

function toSelector(selector: Selector): MessageInitShape<typeof OrientationSelectorSchema> {
  return {
    kind: selector.kind,
    ...("scope" in selector ? { scope: selector.scope } : {}),
    ...("project" in selector ? { project: selector.project } : {}),
    ...("includeUnscoped" in selector ? { includeUnscoped: selector.includeUnscoped } : {}),
  };
}

function fromSelector(selector: OrientationSelector | undefined): EffectiveSelector {
  if (selector === undefined) throw new AppError("internal_error", "memory service returned no selector");
  return effectiveSelectorSchema.parse({
    kind: selector.kind,
    ...(selector.scope !== undefined ? { scope: selector.scope } : {}),
    ...(selector.project !== undefined ? { project: selector.project } : {}),
    ...(selector.includeUnscoped !== undefined ? { includeUnscoped: selector.includeUnscoped } : {}),
  });
}

export function toBriefingRequest(input: BriefingInput): BriefingRequestInit {
  return {
    selector: toSelector(input.selector),
    mode: input.mode,
    sections: input.sections ?? [],
    ...(input.sectionLimit !== undefined ? { sectionLimit: input.sectionLimit } : {}),
    ...(input.since !== undefined ? { since: input.since } : {}),
  };
}

/** A changes-since line's change and successor; absent on a whole read. */
const changeOf = (line: { change?: string | undefined; supersededBy?: string | undefined }) => ({
  ...(line.change !== undefined ? { change: line.change } : {}),
  ...(line.supersededBy !== undefined ? { supersededBy: line.supersededBy } : {}),
});

/** The cursor every read hands out, and with `since` when that cursor's read happened. */
const changesOf = (response: { changesCursor: string; changesSince?: Timestamp | undefined }) => ({
  changesCursor: response.changesCursor,
  ...(response.changesSince !== undefined ? { changesSince: isoTime(response.changesSince, "changes_since") } : {}),
});

const changeCounts = (c: ChangeCounts) => ({
  new: c.new,
  superseded: c.superseded,
  resolved: c.resolved,
  expired: c.expired,
  archived: c.archived,
  erased: c.erased,
});

const commitmentItem = (c: BriefingCommitment) => ({
  id: c.id,
  memoryId: c.memoryId,
  topic: c.topic,
  status: c.status,
  dueAt: isoTimeOrNull(c.dueAt),
  owner: c.owner ?? null,
  overdue: c.overdue,
  ...changeOf(c),
});

const memoryItem = (m: BriefingMemory) => ({
  id: m.id,
  memoryType: m.memoryType,
  topic: m.topic,
  scope: m.scope,
  project: m.project ?? null,
  recordedAt: isoTime(m.recordedAt, "recorded_at"),
  ...changeOf(m),
});

const sectionOf = <I, O>(s: { count: number; items: I[]; hasMore: boolean; changes?: ChangeCounts | undefined }, item: (i: I) => O) => ({
  count: s.count,
  items: s.items.map(item),
  hasMore: s.hasMore,
  ...(s.changes !== undefined ? { changes: changeCounts(s.changes) } : {}),
});
const commitmentSection = (s: BriefingCommitmentSection) => sectionOf(s, commitmentItem);
const memorySection = (s: BriefingMemorySection) => sectionOf(s, memoryItem);

export function toBriefingOutput(response: BriefingResponse): BriefingOutput {
  // Unrequested sections are absent on the wire and stay absent here.
  const sections = {
    commitments: response.commitments && commitmentSection(response.commitments),
    overdue: response.overdue && commitmentSection(response.overdue),
    blockers: response.blockers && memorySection(response.blockers),
    staleCandidates: response.staleCandidates && memorySection(response.staleCandidates),
    recentDecisions: response.recentDecisions && memorySection(response.recentDecisions),
    preferences: response.preferences && memorySection(response.preferences),
  };
  return briefingOutputSchema.parse({
    selector: fromSelector(response.selector),
    mode: response.mode,
    sectionLimit: response.sectionLimit,
    generatedAt: isoTime(response.generatedAt, "generated_at"),
    ...(response.appliedScope !== undefined ? { appliedScope: response.appliedScope } : {}),
    ...changesOf(response),
    ...Object.fromEntries(Object.entries(sections).filter(([, value]) => value !== undefined)),
  });
}

export function toHandoffRequest(input: HandoffInput): HandoffRequestInit {
  return {
    selector: toSelector(input.selector),
    ...(input.generatedFor !== undefined ? { generatedFor: input.generatedFor } : {}),
    sectionLimit: input.sectionLimit,
    ...(input.since !== undefined ? { since: input.since } : {}),
  };
}

const handoffMemory = (m: HandoffMemory) => ({
  id: m.id,
  memoryType: m.memoryType,
  topic: m.topic,
  content: m.content,
  contentLength: m.contentLength,
  truncated: m.truncated,
  scope: m.scope,
  project: m.project ?? null,
  recordedAt: isoTime(m.recordedAt, "recorded_at"),
  ...changeOf(m),
});

const handoffCommitment = (c: HandoffCommitment) => ({
  id: c.id,
  memoryId: c.memoryId,
  topic: c.topic,
  content: c.content,
  contentLength: c.contentLength,
  truncated: c.truncated,
  status: c.status,
  dueAt: isoTimeOrNull(c.dueAt),
  owner: c.owner ?? null,
  overdue: c.overdue,
  scope: c.scope,
  project: c.project ?? null,
  ...changeOf(c),
});

export function toHandoffOutput(response: HandoffResponse): HandoffOutput {
  const { counts, truncated } = response;
  if (counts === undefined || truncated === undefined) throw new AppError("internal_error", "memory service returned no handoff counts");
  return handoffOutputSchema.parse({
    selector: fromSelector(response.selector),
    generatedFor: response.generatedFor ?? null,
    generatedAt: isoTime(response.generatedAt, "generated_at"),
    ...(response.appliedScope !== undefined ? { appliedScope: response.appliedScope } : {}),
    sectionLimit: response.sectionLimit,
    decisions: response.decisions.map(handoffMemory),
    commitments: response.commitments.map(handoffCommitment),
    preferences: response.preferences.map(handoffMemory),
    blockers: response.blockers.map(handoffMemory),
    counts: { decisions: counts.decisions, commitments: counts.commitments, preferences: counts.preferences, blockers: counts.blockers },
    truncated: { decisions: truncated.decisions, commitments: truncated.commitments, preferences: truncated.preferences, blockers: truncated.blockers },
    ...changesOf(response),
    ...(response.changes !== undefined ? { changes: handoffChanges(response.changes) } : {}),
  });
}

function handoffChanges(changes: HandoffChanges) {
  const none = { new: 0, superseded: 0, resolved: 0, expired: 0, archived: 0, erased: 0 };
  const of = (c: ChangeCounts | undefined) => (c === undefined ? none : changeCounts(c));
  return { decisions: of(changes.decisions), commitments: of(changes.commitments), preferences: of(changes.preferences), blockers: of(changes.blockers) };
}

/** Every key of `keys`, with the wire's count or 0 (the service leaves out keys with nothing to count). */
function countsFor<K extends string>(keys: readonly K[], counts: Record<string, number>): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, counts[k] ?? 0])) as Record<K, number>;
}

/** The service's report plus what only the gateway knows: its tools and version. */
export function toDescribeEnvironmentOutput(response: DescribeEnvironmentResponse, surface: SurfaceInfo): DescribeEnvironmentOutput {
  const { stats } = response;
  if (stats === undefined) throw new AppError("internal_error", "memory service returned no stats");
  const live = response.queues.filter((q) => q.live);
  const depths = live.map((q) => ({
    name: q.name,
    waiting: q.waiting ?? 0,
    active: q.active ?? 0,
    delayed: q.delayed ?? 0,
    failed: q.failed ?? 0,
    failedByCause: countsFor(JOB_FAILURE_CAUSES, q.failedByCause),
  }));
  const consolidation = stats.pendingConsolidationProposals;
  const fact = stats.pendingFactProposals;
  return describeEnvironmentOutputSchema.parse({
    capabilities: {
      tools: [...surface.tools],
      toolCount: surface.tools.length,
      version: surface.version,
      embedding: response.embedding ? { model: response.embedding.model, dimensions: response.embedding.dimensions } : null,
      searchLegs: response.searchLegs.map((l) => ({ leg: l.leg, live: l.live })),
      queues: response.queues.map((q) => ({ name: q.name, live: q.live })),
    },
    scopes: response.scopes.map((scope) => fromWire(scopeRecordSchema, ScopeSchema, scope)),
    retrievalScopePolicy: response.policy && fromWire(retrievalPolicySchema, RetrievalPolicySchema, response.policy),
    stats: {
      memoriesByType: countsFor(MEMORY_TYPES, stats.memoriesByType),
      activeMemories: stats.activeMemories,
      supersededMemories: stats.supersededMemories,
      archivedMemories: stats.archivedMemories,
      commitmentsByStatus: countsFor(COMMITMENT_STATUSES, stats.commitmentsByStatus),
      pendingEmbeddings: stats.pendingEmbeddings,
      pendingProposals: { consolidation, fact, total: consolidation + fact },
      queues: depths,
      deadLetter: depths.reduce((sum, q) => sum + q.failed, 0),
      deadLetterByCause: countsFor(
        JOB_FAILURE_CAUSES,
        Object.fromEntries(JOB_FAILURE_CAUSES.map((cause) => [cause, depths.reduce((sum, q) => sum + q.failedByCause[cause], 0)])),
      ),
    },
  });
}
