import { z } from "zod";
import {
  DEFAULT_GET_CONTENT_CHARS,
  MAX_CONTENT_LENGTH,
  MAX_GET_CONTENT_CHARS,
  MAX_GET_MEMORIES_IDS,
  MAX_GET_TOTAL_CHARS,
  MAX_PROJECT_LENGTH,
  MAX_SCOPE_LENGTH,
  MAX_TAG_LENGTH,
  MAX_TAGS,
  MAX_TOPIC_LENGTH,
  MAX_VALID_FROM_SKEW_MS,
  MIN_GET_CONTENT_CHARS,
  SCOPE_NAME_PATTERN,
} from "./limits.js";
import { outputObject } from "./open-object.js";
import { storableText } from "./storable-text.js";

export const memoryTypeSchema = z.enum(["decision", "commitment", "blocker", "fact", "preference", "pattern", "note", "event"]);
export type MemoryType = z.infer<typeof memoryTypeSchema>;
export const MEMORY_TYPES = memoryTypeSchema.options;

export const memoryStatusSchema = z.enum(["active", "archived"]);
export type MemoryStatus = z.infer<typeof memoryStatusSchema>;

const embeddingStateSchema = z.enum(["done", "pending"]);
export type EmbeddingState = z.infer<typeof embeddingStateSchema>;

export const memoryIdSchema = z.uuid({ message: "must be a memory id (UUID)" });

export const scopeNameSchema = storableText()
  .trim()
  .min(1)
  .max(MAX_SCOPE_LENGTH)
  .regex(SCOPE_NAME_PATTERN, { message: "must be kebab-case: lower-case letters, digits and hyphens" });

export const projectSchema = storableText().trim().min(1).max(MAX_PROJECT_LENGTH);
export const topicSchema = storableText().trim().min(1).max(MAX_TOPIC_LENGTH);
const contentSchema = storableText().trim().min(1).max(MAX_CONTENT_LENGTH);
export const tagsSchema = z.array(storableText().trim().min(1).max(MAX_TAG_LENGTH)).max(MAX_TAGS);
/** A commitment's owner: who is on the hook (a name, not an account). */
export const ownerSchema = storableText().trim().min(1).max(256);

/** An instant on the wire: ISO-8601 in UTC with a Z, at most millisecond precision (what JavaScript can hold). */
export const instantSchema = z.iso
  .datetime({ message: "must be an ISO-8601 UTC timestamp like 2026-01-31T09:00:00Z" })
  .refine((v) => !/\.\d{4,}/.test(v), { message: "at most 3 fractional digits (milliseconds)" });

export const commitmentStatusSchema = z.enum(["open", "waiting", "resolved", "expired"]);
export type CommitmentStatus = z.infer<typeof commitmentStatusSchema>;
export const COMMITMENT_STATUSES = commitmentStatusSchema.options;

/**
 * The commitment state machine: every legal move. Same-state requests are no-ops, not moves.
 * The database trigger in migration 0002 must list exactly these (a test compares them).
 */
export const COMMITMENT_TRANSITIONS: Readonly<Record<CommitmentStatus, readonly CommitmentStatus[]>> = {
  open: ["waiting", "resolved", "expired"],
  waiting: ["open", "resolved", "expired"],
  resolved: ["open"],
  expired: ["open"],
};

const edgeIntentSchema = z.enum(["supersedes", "updates"]);
export type EdgeIntent = z.infer<typeof edgeIntentSchema>;

const MAX_FACTS_PER_MEMORY = 20;

/** One measurable claim: the unit lives in the predicate (top_set.weight_kg), one measure per fact. */
export const factInputSchema = z.strictObject({
  subject: storableText().trim().min(1).max(256),
  predicate: storableText().trim().min(1).max(256),
  value: storableText().trim().min(1).max(2000),
  confidence: z.number().min(0).max(1).optional(),
  validFrom: instantSchema.optional(),
});
export type FactInput = z.infer<typeof factInputSchema>;

/**
 * A client's name for one write, as in the IETF httpapi Idempotency-Key draft (REST sends it as
 * that header): sending the same write again with the same key returns the first result instead
 * of storing a second memory. Visible ASCII, up to 255 characters; a UUID is a good choice.
 */
const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
export const idempotencyKeySchema = storableText()
  .min(1)
  .max(MAX_IDEMPOTENCY_KEY_LENGTH)
  .regex(/^[\x21-\x7e]+$/, { message: "must be visible ASCII characters (a UUID, for instance)" })
  .describe(
    "Optional: a unique string (a UUID) for this write. If the call fails or times out, send it again with the same key: the first result comes back instead of a second memory.",
  );

/**
 * When what a write records became true: an instant no later than the server's clock plus a small
 * skew. Absent means the moment of the write. Recorded time is always the server's.
 */
const skewMinutes = MAX_VALID_FROM_SKEW_MS / 60_000;
const validFromSchema = instantSchema
  .refine((v) => Date.parse(v) <= Date.now() + MAX_VALID_FROM_SKEW_MS, {
    message: `must not be more than ${skewMinutes} minutes in the future`,
  })
  .describe(
    "Optional: when what you record happened or became true, if earlier than now (ISO-8601 UTC, e.g. 2026-01-26T09:00:00Z) — a decision made on Monday recorded on Friday, a past conversation's date. Omit when it is true as of now.",
  );

/** The fields a new memory carries, shared by remember and revise. */
const memoryFields = {
  memoryType: memoryTypeSchema,
  topic: topicSchema,
  content: contentSchema,
  scope: scopeNameSchema.optional(),
  project: projectSchema.optional(),
  tags: tagsSchema.default([]),
  /** Commitments only: when it is due, and who owns it. */
  dueAt: instantSchema.optional(),
  owner: ownerSchema.optional(),
  facts: z.array(factInputSchema).max(MAX_FACTS_PER_MEMORY).default([]),
  idempotencyKey: idempotencyKeySchema.optional(),
  validFrom: validFromSchema.optional(),
};

function commitmentFieldsOnlyOnCommitments(
  value: { memoryType: MemoryType; dueAt?: string | undefined; owner?: string | undefined },
  ctx: z.RefinementCtx,
): void {
  if (value.memoryType === "commitment") return;
  for (const field of ["dueAt", "owner"] as const) {
    if (value[field] !== undefined) ctx.addIssue({ code: "custom", path: [field], message: "only a commitment has this field" });
  }
}

/**
 * remember: one typed atom of memory. scope is optional: without one, a project mapped to a scope
 * decides, else the default scope.
 */
export const rememberInputSchema = z.strictObject(memoryFields).superRefine(commitmentFieldsOnlyOnCommitments);
export type RememberInput = z.infer<typeof rememberInputSchema>;

/** revise: a successor for a predecessor, linked by a supersedes or updates edge. */
export const reviseInputSchema = z
  .strictObject({ ...memoryFields, predecessorId: z.uuid({ message: "must be a memory id (UUID)" }), edgeIntent: edgeIntentSchema.default("supersedes") })
  .superRefine(commitmentFieldsOnlyOnCommitments);
export type ReviseInput = z.infer<typeof reviseInputSchema>;

/** resolve: move a commitment through its state machine (open again = unresolve); a blocker archives. */
export const resolveInputSchema = z.strictObject({
  memoryId: z.uuid({ message: "must be a memory id (UUID)" }),
  status: commitmentStatusSchema,
});
export type ResolveInput = z.infer<typeof resolveInputSchema>;

const memoryRefSchema = outputObject({
  id: z.string(),
  memoryType: memoryTypeSchema,
  topic: z.string(),
  scope: z.string(),
  project: z.string().nullable(),
});

export const commitmentRecordSchema = outputObject({
  id: z.string(),
  status: commitmentStatusSchema,
  dueAt: z.string().nullable(),
  owner: z.string().nullable(),
});
export type CommitmentRecord = z.infer<typeof commitmentRecordSchema>;

export const factRecordSchema = outputObject({
  id: z.string(),
  subject: z.string(),
  predicate: z.string(),
  value: z.string(),
  confidence: z.number().nullable(),
  validFrom: z.string(),
  validTo: z.string().nullable(),
  recordedAt: z.string(),
  memoryId: z.string().nullable(),
});
export type FactRecord = z.infer<typeof factRecordSchema>;

/** What a write answers, remember or revise: the stored memory named (not its content back), its embedding state, facts and commitment. */
const writtenMemoryShape = {
  memory: memoryRefSchema,
  embedded: embeddingStateSchema,
  facts: z.array(factRecordSchema),
  commitment: commitmentRecordSchema.optional(),
};

export const rememberOutputSchema = outputObject(writtenMemoryShape);
export type RememberOutput = z.infer<typeof rememberOutputSchema>;

export const reviseOutputSchema = outputObject({
  ...writtenMemoryShape,
  predecessorId: z.string(),
  edgeIntent: edgeIntentSchema,
});
export type ReviseOutput = z.infer<typeof reviseOutputSchema>;

export const resolveOutputSchema = outputObject({
  memoryId: z.string(),
  /** The commitment's id; for a blocker, the memory id. */
  commitmentId: z.string(),
  status: z.enum([...COMMITMENT_STATUSES, "archived"]),
  previousStatus: z.enum([...COMMITMENT_STATUSES, "active"]),
});

export const archiveOutputSchema = outputObject({ id: z.string(), status: z.literal("archived") });

/** get_memories: batched full-content read, bounded per item and in aggregate. */
export const getMemoriesInputSchema = z
  .strictObject({
    ids: z.array(memoryIdSchema).min(1).max(MAX_GET_MEMORIES_IDS),
    maxContentChars: z.int().min(MIN_GET_CONTENT_CHARS).max(MAX_GET_CONTENT_CHARS).default(DEFAULT_GET_CONTENT_CHARS),
  })
  .refine((v) => v.ids.length * v.maxContentChars <= MAX_GET_TOTAL_CHARS, {
    message: `ids × maxContentChars must not exceed ${MAX_GET_TOTAL_CHARS}`,
    path: ["maxContentChars"],
  });
export type GetMemoriesInput = z.infer<typeof getMemoriesInputSchema>;

/**
 * A memory as every read shows it: `content` may be cut (an excerpt, or to maxContentChars) and
 * `truncated` says whether it was. Search hits, handoff lines and get_memories records all start
 * from these fields.
 */
export const excerptedMemoryShape = {
  id: z.string(),
  memoryType: memoryTypeSchema,
  topic: z.string(),
  content: z.string(),
  contentLength: z.int().min(0),
  truncated: z.boolean(),
  scope: z.string(),
  project: z.string().nullable(),
  recordedAt: z.string(),
};

export const memoryRecordSchema = outputObject({
  ...excerptedMemoryShape,
  status: memoryStatusSchema,
  tags: z.array(z.string()),
  validFrom: z.string(),
  validTo: z.string().nullable(),
  embedded: embeddingStateSchema,
  /** The successor's id once a later memory supersedes or updates this one. */
  supersededBy: z.string().nullable(),
  commitment: commitmentRecordSchema.nullable(),
  /** Present once the memory was erased: its topic and content then read "[erased]" (docs/erasure.md). */
  erasedAt: z.string().optional(),
});
export type MemoryRecord = z.infer<typeof memoryRecordSchema>;

export const getMemoriesOutputSchema = outputObject({
  memories: z.array(memoryRecordSchema),
  count: z.int().min(0),
  notFound: z.array(z.string()),
});
