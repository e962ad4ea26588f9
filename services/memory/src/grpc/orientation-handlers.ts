import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { RetrievalPolicySchema, ScopeSchema } from "@3ngram/proto/memory/v1";
import type {
  BriefingCommitmentSectionSchema,
  BriefingMemorySectionSchema,
  HandoffCommitmentSchema,
  HandoffMemorySchema,
  MemoryService,
  OrientationSelector,
  OrientationSelectorSchema,
} from "@3ngram/proto/memory/v1";
import { SCOPES, toWire, type Handlers, type Policies } from "@3ngram/rpc";
import { briefingInputSchema, handoffInputSchema, parseInput, type EffectiveSelector } from "@3ngram/schema";
import type { CommitmentLineRow, MemoryLineRow } from "../db/briefing.js";
import type { ChangeFields } from "../db/changes.js";
import { briefing, type OrientationRead, type Section } from "../domain/briefing.js";
import type { MemoryDeps } from "../domain/deps.js";
import { describeEnvironment } from "../domain/environment.js";
import { handoff, type Excerpted } from "../domain/handoff.js";
import { actorOf } from "./mappers.js";

// Orientation: briefing, handoff and describe_environment. All read-only.
type OrientationMethods = "briefing" | "handoff" | "describeEnvironment";

export function orientationHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, OrientationMethods> {
  return {
    async briefing(request, ctx) {
      const input = parseInput(briefingInputSchema, {
        selector: selectorFromProto(request.selector),
        // proto3 has no "absent" for strings and lists: empty means "not given".
        ...(request.mode !== "" ? { mode: request.mode } : {}),
        ...(request.sections.length > 0 ? { sections: request.sections } : {}),
        ...(request.sectionLimit !== undefined ? { sectionLimit: request.sectionLimit } : {}),
        ...(request.since !== undefined ? { since: request.since } : {}),
      });
      const out = await briefing(deps, actorOf(ctx), input);
      const { sections } = out;
      return {
        selector: selectorToProto(out.selector),
        mode: out.mode,
        sectionLimit: out.sectionLimit,
        generatedAt: timestampFromDate(out.generatedAt),
        ...(out.appliedScope !== undefined ? { appliedScope: out.appliedScope } : {}),
        ...changesOf(out),
        ...(sections.commitments ? { commitments: commitmentSection(sections.commitments) } : {}),
        ...(sections.overdue ? { overdue: commitmentSection(sections.overdue) } : {}),
        ...(sections.blockers ? { blockers: memorySection(sections.blockers) } : {}),
        ...(sections.staleCandidates ? { staleCandidates: memorySection(sections.staleCandidates) } : {}),
        ...(sections.recentDecisions ? { recentDecisions: memorySection(sections.recentDecisions) } : {}),
        ...(sections.preferences ? { preferences: memorySection(sections.preferences) } : {}),
      };
    },
    async handoff(request, ctx) {
      const input = parseInput(handoffInputSchema, {
        selector: selectorFromProto(request.selector),
        ...(request.generatedFor !== undefined ? { generatedFor: request.generatedFor } : {}),
        ...(request.sectionLimit !== undefined ? { sectionLimit: request.sectionLimit } : {}),
        ...(request.since !== undefined ? { since: request.since } : {}),
      });
      const out = await handoff(deps, actorOf(ctx), input);
      const truncated = (s: { count: number; lines: unknown[] }) => s.count > s.lines.length;
      return {
        selector: selectorToProto(out.selector),
        ...(out.generatedFor !== null ? { generatedFor: out.generatedFor } : {}),
        generatedAt: timestampFromDate(out.generatedAt),
        ...(out.appliedScope !== undefined ? { appliedScope: out.appliedScope } : {}),
        sectionLimit: out.sectionLimit,
        decisions: out.decisions.lines.map(handoffMemory),
        commitments: out.commitments.lines.map(handoffCommitment),
        preferences: out.preferences.lines.map(handoffMemory),
        blockers: out.blockers.lines.map(handoffMemory),
        counts: { decisions: out.decisions.count, commitments: out.commitments.count, preferences: out.preferences.count, blockers: out.blockers.count },
        truncated: {
          decisions: truncated(out.decisions),
          commitments: truncated(out.commitments),
          preferences: truncated(out.preferences),
          blockers: truncated(out.blockers),
        },
        ...changesOf(out),
        ...(out.decisions.changes !== undefined
          ? {
              changes: {
                decisions: out.decisions.changes,
                commitments: out.commitments.changes,
                preferences: out.preferences.changes,
                blockers: out.blockers.changes,
              },
            }
          : {}),
      };
    },
    async describeEnvironment(_request, ctx) {
      const env = await describeEnvironment(deps, actorOf(ctx));
      const { stats } = env;
      return {
        ...(env.embedding ? { embedding: env.embedding } : {}),
        searchLegs: env.searchLegs,
        queues: env.queues.map((q) => ({ name: q.name, live: q.counts !== null, ...(q.counts ?? {}), failedByCause: q.deadLetters ?? {} })),
        scopes: env.scopes.map((row) => toWire(ScopeSchema, row)),
        policy: toWire(RetrievalPolicySchema, env.policy),
        stats: {
          memoriesByType: stats.memoriesByType,
          activeMemories: stats.activeMemories,
          supersededMemories: stats.supersededMemories,
          archivedMemories: stats.archivedMemories,
          commitmentsByStatus: stats.commitmentsByStatus,
          pendingEmbeddings: stats.pendingEmbeddings,
          pendingConsolidationProposals: stats.pendingProposals.consolidation,
          pendingFactProposals: stats.pendingProposals.fact,
        },
      };
    },
  };
}

export const orientationPolicies: Pick<Policies<typeof MemoryService>, OrientationMethods> = {
  briefing: { anyScope: [SCOPES.read], tenant: true },
  handoff: { anyScope: [SCOPES.read], tenant: true },
  describeEnvironment: { anyScope: [SCOPES.read], tenant: true },
};

/** A selector's fields, copying only the ones present (absent fields stay absent either way). */
function selectorFields<K extends string>(selector: {
  kind: K;
  scope?: string | undefined;
  project?: string | undefined;
  includeUnscoped?: boolean | undefined;
}) {
  return {
    kind: selector.kind,
    ...(selector.scope !== undefined ? { scope: selector.scope } : {}),
    ...(selector.project !== undefined ? { project: selector.project } : {}),
    ...(selector.includeUnscoped !== undefined ? { includeUnscoped: selector.includeUnscoped } : {}),
  };
}

/** proto selector → the plain object the shared zod schema validates (a missing selector is refused there). */
function selectorFromProto(selector: OrientationSelector | undefined): Record<string, unknown> | undefined {
  return selector === undefined ? undefined : selectorFields(selector);
}

function selectorToProto(selector: EffectiveSelector): MessageInitShape<typeof OrientationSelectorSchema> {
  return selectorFields(selector);
}

/** The cursor every read hands out, and with `since` when that cursor's read happened. */
function changesOf(read: OrientationRead) {
  return { changesCursor: read.changesCursor, ...(read.changesSince !== undefined ? { changesSince: timestampFromDate(read.changesSince) } : {}) };
}

/** A changes-since line's change and successor (absent on a whole read). */
function changeOf(row: Partial<ChangeFields>) {
  return { ...(row.change !== undefined ? { change: row.change } : {}), ...(row.supersededBy ? { supersededBy: row.supersededBy } : {}) };
}

type Line<T> = Omit<T, "contentHead" | "contentLength"> & Partial<ChangeFields>;

function commitmentLine(row: Line<CommitmentLineRow>) {
  return {
    id: row.id,
    memoryId: row.memoryId,
    topic: row.topic,
    status: row.status,
    ...(row.dueAt ? { dueAt: timestampFromDate(row.dueAt) } : {}),
    ...(row.owner !== null ? { owner: row.owner } : {}),
    overdue: row.overdue,
    ...changeOf(row),
  };
}

function memoryLine(row: Line<MemoryLineRow>) {
  return {
    id: row.id,
    memoryType: row.memoryType,
    topic: row.topic,
    scope: row.scope,
    ...(row.project !== null ? { project: row.project } : {}),
    recordedAt: timestampFromDate(row.recordedAt),
    ...changeOf(row),
  };
}

function sectionOf<T, I>(s: Section<T>, line: (row: Line<T>) => I) {
  return { count: s.count, items: s.rows.map(line), hasMore: s.count > s.rows.length, ...(s.changes !== undefined ? { changes: s.changes } : {}) };
}

function commitmentSection(s: Section<CommitmentLineRow>): MessageInitShape<typeof BriefingCommitmentSectionSchema> {
  return sectionOf(s, commitmentLine);
}

function memorySection(s: Section<MemoryLineRow>): MessageInitShape<typeof BriefingMemorySectionSchema> {
  return sectionOf(s, memoryLine);
}

function handoffMemory(line: Line<MemoryLineRow> & Excerpted): MessageInitShape<typeof HandoffMemorySchema> {
  return { ...memoryLine(line), content: line.content, contentLength: line.contentLength, truncated: line.truncated };
}

function handoffCommitment(line: Line<CommitmentLineRow> & Excerpted): MessageInitShape<typeof HandoffCommitmentSchema> {
  return {
    ...commitmentLine(line),
    content: line.content,
    contentLength: line.contentLength,
    truncated: line.truncated,
    scope: line.scope,
    ...(line.project !== null ? { project: line.project } : {}),
  };
}
