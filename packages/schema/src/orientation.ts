/**
 * Orientation reads: briefing (what needs attention, topics only), handoff (a bounded export with
 * excerpts for another agent) and describe_environment (what this server is and holds). Each is
 * one bounded, read-only snapshot; briefing and handoff need an explicit selector, so an agent
 * never pulls a whole tenant by accident.
 */
import { z } from "zod";
import { JOB_FAILURE_CAUSES } from "./jobs.js";
import { MAX_TOPIC_LENGTH } from "./limits.js";
import {
  COMMITMENT_STATUSES,
  MEMORY_TYPES,
  commitmentStatusSchema,
  excerptedMemoryShape,
  memoryTypeSchema,
  projectSchema,
  scopeNameSchema,
  type MemoryType,
} from "./memory.js";
import { outputObject } from "./open-object.js";
import { perActionInput } from "./per-action.js";
import { storableText } from "./storable-text.js";
import { searchLegSchema } from "./search.js";
import { retrievalPolicySchema, scopeRecordSchema } from "./scopes.js";

/** Items per section in brief mode, the default. */
export const DEFAULT_BRIEFING_TOP = 3;
/** Items per section in full mode. */
export const MAX_BRIEFING_SECTION = 25;
/** The most sectionLimit may ask for. */
export const MAX_BRIEFING_SECTION_CEILING = 100;
/** Handoff lines per section by default, and the most sectionLimit may ask for. */
export const MAX_HANDOFF_SECTION = 25;
export const MAX_HANDOFF_SECTION_CEILING = 100;
/** generatedFor is an echoed label (an agent or provider name), never stored. */
const MAX_GENERATED_FOR_LENGTH = MAX_TOPIC_LENGTH;
/** A live memory of a stale-candidate type recorded longer ago than this is worth re-checking. */
export const STALE_WINDOW_DAYS = 30;
/** Only these types go stale: commitments have their own lifecycle, notes, events and patterns do not expire. */
export const STALE_CANDIDATE_TYPES = ["decision", "preference", "blocker", "fact"] as const satisfies readonly MemoryType[];
/** A changesCursor older than this is refused as stale: after a month away, read the whole briefing again. */
export const MAX_CHANGES_CURSOR_AGE_DAYS = 30;
/** Cursors are far shorter; the bound only keeps a garbled value from costing anything. */
const MAX_CHANGES_CURSOR_LENGTH = 4096;

/**
 * `changesCursor` from an earlier briefing or handoff of the same selector: with it, each section
 * lists only what changed since that read (docs/orientation.md#changes-since-a-cursor).
 */
export const changesCursorSchema = storableText().min(1).max(MAX_CHANGES_CURSOR_LENGTH);

/**
 * How an item changed since the cursor: `new` entered the section (written, reopened, or, for
 * overdue and staleCandidates, crossed the section's time line); the others left it.
 */
const changeKindSchema = z.enum(["new", "superseded", "resolved", "expired", "archived", "erased"]);
export type ChangeKind = z.infer<typeof changeKindSchema>;
export const CHANGE_KINDS = changeKindSchema.options;

/** Exact number of changed items of each kind in one section. */
const changeCountsSchema = outputObject(Object.fromEntries(CHANGE_KINDS.map((k) => [k, z.int().min(0)])) as Record<ChangeKind, z.ZodInt>);
export type ChangeCounts = z.infer<typeof changeCountsSchema>;

/** What every line of a changes-since read adds: the change, and the successor of a superseded item. */
const changeFields = {
  change: changeKindSchema.optional(),
  supersededBy: z.string().optional(),
};

export const briefingSectionSchema = z.enum(["commitments", "overdue", "blockers", "staleCandidates", "recentDecisions", "preferences"]);
export type BriefingSection = z.infer<typeof briefingSectionSchema>;
export const BRIEFING_SECTIONS = briefingSectionSchema.options;

export const briefingModeSchema = z.enum(["brief", "full"]);
export type BriefingMode = z.infer<typeof briefingModeSchema>;

/**
 * Which memories an orientation read covers. Required: `all` is an explicit choice, never a
 * default. `project` never matches memories without a project; `scope_project` with
 * includeUnscoped adds the scope's memories that have none. Scope names may be aliases.
 */
export const selectorSchema = perActionInput("kind", [
  z.strictObject({ kind: z.literal("all") }),
  z.strictObject({ kind: z.literal("scope"), scope: scopeNameSchema }),
  z.strictObject({ kind: z.literal("project"), project: projectSchema }),
  z.strictObject({ kind: z.literal("scope_project"), scope: scopeNameSchema, project: projectSchema, includeUnscoped: z.boolean().default(false) }),
]);
export type Selector = z.infer<typeof selectorSchema>;

/** The selector a read actually used (after the retrieval default narrowed `all`), as one open object. */
export const effectiveSelectorSchema = outputObject({
  kind: z.enum(["all", "scope", "project", "scope_project"]),
  scope: z.string().optional(),
  project: z.string().optional(),
  includeUnscoped: z.boolean().optional(),
});
export type EffectiveSelector = z.infer<typeof effectiveSelectorSchema>;

export const briefingInputSchema = z.strictObject({
  selector: selectorSchema,
  mode: briefingModeSchema.default("brief"),
  sections: z
    .array(briefingSectionSchema)
    .min(1)
    .max(BRIEFING_SECTIONS.length)
    .refine((s) => new Set(s).size === s.length, { message: "each section at most once" })
    .optional(),
  sectionLimit: z.int().min(1).max(MAX_BRIEFING_SECTION_CEILING).optional(),
  since: changesCursorSchema.optional(),
});
export type BriefingInput = z.infer<typeof briefingInputSchema>;

/** The per-section item count a briefing uses: sectionLimit when given, else the mode's default. */
export function briefingSectionLimit(input: Pick<BriefingInput, "mode" | "sectionLimit">): number {
  return input.sectionLimit ?? (input.mode === "full" ? MAX_BRIEFING_SECTION : DEFAULT_BRIEFING_TOP);
}

/** A commitment line: metadata only, never content. */
const briefingCommitmentSchema = outputObject({
  id: z.string(),
  memoryId: z.string(),
  topic: z.string(),
  status: commitmentStatusSchema,
  dueAt: z.string().nullable(),
  owner: z.string().nullable(),
  /** dueAt is set and earlier than generatedAt. */
  overdue: z.boolean(),
  ...changeFields,
});
export type BriefingCommitment = z.infer<typeof briefingCommitmentSchema>;

/** A memory line: metadata only, never content. */
const briefingMemorySchema = outputObject({
  id: z.string(),
  memoryType: memoryTypeSchema,
  topic: z.string(),
  scope: z.string(),
  project: z.string().nullable(),
  recordedAt: z.string(),
  ...changeFields,
});
export type BriefingMemory = z.infer<typeof briefingMemorySchema>;

/**
 * count is exact (every match, not just the items shown); hasMore = count > items.length. With
 * `since`, the items are the changes and count and changes count them.
 */
const section = <T extends z.ZodType>(item: T) =>
  outputObject({
    count: z.int().min(0),
    items: z.array(item).max(MAX_BRIEFING_SECTION_CEILING),
    hasMore: z.boolean(),
    changes: changeCountsSchema.optional(),
  });

const commitmentSectionSchema = section(briefingCommitmentSchema);
const memorySectionSchema = section(briefingMemorySchema);
export type CommitmentSection = z.infer<typeof commitmentSectionSchema>;
export type MemorySection = z.infer<typeof memorySectionSchema>;

/** Sections that were not requested are absent (never an empty stand-in). */
export const briefingOutputSchema = outputObject({
  selector: effectiveSelectorSchema,
  mode: briefingModeSchema,
  /** The items per section this briefing used. */
  sectionLimit: z.int().min(1).max(MAX_BRIEFING_SECTION_CEILING),
  generatedAt: z.string(),
  /** Set when the retrieval default narrowed `all` to this scope. */
  appliedScope: z.string().optional(),
  /** Pass back as `since` (same selector) to get only what changes after this read. */
  changesCursor: z.string(),
  /** With `since`: when the read that issued that cursor happened. */
  changesSince: z.string().optional(),
  commitments: commitmentSectionSchema.optional(),
  overdue: commitmentSectionSchema.optional(),
  blockers: memorySectionSchema.optional(),
  staleCandidates: memorySectionSchema.optional(),
  recentDecisions: memorySectionSchema.optional(),
  preferences: memorySectionSchema.optional(),
});
export type BriefingOutput = z.infer<typeof briefingOutputSchema>;

export const handoffInputSchema = z.strictObject({
  selector: selectorSchema,
  generatedFor: storableText().trim().min(1).max(MAX_GENERATED_FOR_LENGTH).optional(),
  sectionLimit: z.int().min(1).max(MAX_HANDOFF_SECTION_CEILING).default(MAX_HANDOFF_SECTION),
  since: changesCursorSchema.optional(),
});
export type HandoffInput = z.infer<typeof handoffInputSchema>;

/** A handoff line: a memory with a bounded excerpt. */
const handoffMemorySchema = outputObject({ ...excerptedMemoryShape, ...changeFields });
export type HandoffMemory = z.infer<typeof handoffMemorySchema>;

const handoffCommitmentSchema = outputObject({
  id: z.string(),
  memoryId: z.string(),
  topic: z.string(),
  content: z.string(),
  contentLength: z.int().min(0),
  truncated: z.boolean(),
  status: commitmentStatusSchema,
  dueAt: z.string().nullable(),
  owner: z.string().nullable(),
  overdue: z.boolean(),
  scope: z.string(),
  project: z.string().nullable(),
  ...changeFields,
});
export type HandoffCommitment = z.infer<typeof handoffCommitmentSchema>;

export const HANDOFF_SECTIONS = ["decisions", "commitments", "preferences", "blockers"] as const;
export type HandoffSection = (typeof HANDOFF_SECTIONS)[number];

const perHandoffSection = <T extends z.ZodType>(value: T) => outputObject({ decisions: value, commitments: value, preferences: value, blockers: value });

export const handoffOutputSchema = outputObject({
  selector: effectiveSelectorSchema,
  generatedFor: z.string().nullable(),
  generatedAt: z.string(),
  appliedScope: z.string().optional(),
  sectionLimit: z.int().min(1).max(MAX_HANDOFF_SECTION_CEILING),
  /** As briefing's: pass back as `since` for only what changes after this read. */
  changesCursor: z.string(),
  changesSince: z.string().optional(),
  decisions: z.array(handoffMemorySchema).max(MAX_HANDOFF_SECTION_CEILING),
  commitments: z.array(handoffCommitmentSchema).max(MAX_HANDOFF_SECTION_CEILING),
  preferences: z.array(handoffMemorySchema).max(MAX_HANDOFF_SECTION_CEILING),
  blockers: z.array(handoffMemorySchema).max(MAX_HANDOFF_SECTION_CEILING),
  /** Exact totals per section. */
  counts: perHandoffSection(z.int().min(0)),
  /** Per section: more matched than were returned (count > lines). Distinct from an excerpt's truncated. */
  truncated: perHandoffSection(z.boolean()),
  /** With `since`: per section, how many lines changed in each way (counts then count changes). */
  changes: perHandoffSection(changeCountsSchema).optional(),
});
export type HandoffOutput = z.infer<typeof handoffOutputSchema>;

/** describe_environment takes nothing; any key is refused. */
export const describeEnvironmentInputSchema = z.strictObject({});

const countsByKey = <K extends string>(keys: readonly K[]) => outputObject(Object.fromEntries(keys.map((k) => [k, z.int().min(0)])) as Record<K, z.ZodInt>);

const searchLegStatusSchema = outputObject({ leg: searchLegSchema, live: z.boolean() });
const queueStatusSchema = outputObject({ name: z.string(), live: z.boolean() });
const queueDepthSchema = outputObject({
  name: z.string(),
  waiting: z.int().min(0),
  active: z.int().min(0),
  delayed: z.int().min(0),
  /** Jobs that used up their retries (the dead-letter view). */
  failed: z.int().min(0),
  /** The dead letters by why they failed (over the newest 1 000 on Redis); `unavailable` ones are re-driven on their own. */
  failedByCause: countsByKey(JOB_FAILURE_CAUSES),
});
export type QueueDepth = z.infer<typeof queueDepthSchema>;

/** An embedding model: its id (stored with every vector it made) and its vector length. */
const embeddingModelInfoSchema = outputObject({ model: z.string(), dimensions: z.int().min(1) });

/** What the memory service knows of the deployment's capabilities. */
const deploymentCapabilities = {
  /** The configured embedding model; null when none is (memories are then found by full text until one is). */
  embedding: embeddingModelInfoSchema.nullable(),
  searchLegs: z.array(searchLegStatusSchema),
  /** Background queues; live when their backend answered just now. */
  queues: z.array(queueStatusSchema),
};

export const describeEnvironmentOutputSchema = outputObject({
  capabilities: outputObject({
    /** The MCP tools this server offers, in registration order. */
    tools: z.array(z.string()),
    toolCount: z.int().min(0),
    version: z.string(),
    ...deploymentCapabilities,
  }),
  scopes: z.array(scopeRecordSchema),
  retrievalScopePolicy: retrievalPolicySchema,
  stats: outputObject({
    /** Live memories (active, not superseded) per type. */
    memoriesByType: countsByKey(MEMORY_TYPES),
    /** Every memory is in exactly one of these three states. */
    activeMemories: z.int().min(0),
    supersededMemories: z.int().min(0),
    archivedMemories: z.int().min(0),
    /** Commitments of live memories, per status. */
    commitmentsByStatus: countsByKey(COMMITMENT_STATUSES),
    /** Live memories still waiting for any embedding. */
    pendingEmbeddings: z.int().min(0),
    /**
     * For the configured model: live memories that carry its vector, and live memories still
     * pending (none yet, or another model's, re-embedded in the background after a model change;
     * search finds them by their words meanwhile). embedded + pending = activeMemories. Null when
     * no embedder is configured.
     */
    embeddings: outputObject({ ...embeddingModelInfoSchema.shape, embedded: z.int().min(0), pending: z.int().min(0) }).nullable(),
    /** Proposals waiting for review, per kind. */
    pendingProposals: outputObject({ consolidation: z.int().min(0), fact: z.int().min(0), total: z.int().min(0) }),
    /** Deployment-wide depth of each live queue (not per tenant). */
    queues: z.array(queueDepthSchema),
    /** Failed jobs across the live queues. */
    deadLetter: z.int().min(0),
    /** The same dead letters by cause. */
    deadLetterByCause: countsByKey(JOB_FAILURE_CAUSES),
  }),
});
export type DescribeEnvironmentOutput = z.infer<typeof describeEnvironmentOutputSchema>;

/** What the memory service answers for describe_environment: all of it but the gateway's own surface (tools, version). */
export const environmentReportSchema = describeEnvironmentOutputSchema.extend({ capabilities: outputObject(deploymentCapabilities) });
