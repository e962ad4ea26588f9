/**
 * The tenant archive: one JSON record per line (NDJSON), discriminated on `kind`. The exporter
 * writes these records, the importer reads them and the REST edge describes them, all from these
 * definitions. Exported lines always carry every field; on import most are optional so a
 * hand-written file stays short (see docs/import-export.md for the defaults).
 */
import { z } from "zod";
import {
  commitmentStatusSchema,
  factInputSchema,
  instantSchema,
  memoryStatusSchema,
  memoryTypeSchema,
  ownerSchema,
  projectSchema,
  scopeNameSchema,
  tagsSchema,
  topicSchema,
} from "./memory.js";
import { ERASED_MARKER } from "./erasure.js";
import { outputObject } from "./open-object.js";
import { storableText } from "./storable-text.js";
import { MAX_SCOPE_ALIASES, MAX_SCOPE_PROJECTS, retrievalModeSchema } from "./scopes.js";

export const ARCHIVE_FORMAT = "3ngram";
export const ARCHIVE_VERSION = 1;
/** Content may be this long through import (the tools stop at MAX_CONTENT_LENGTH). */
export const MAX_IMPORT_CONTENT_LENGTH = 262_144;
/** The largest NDJSON body one import call accepts. */
export const MAX_IMPORT_BODY_BYTES = 32 * 1024 * 1024;
/** One import call stores at most this many records (an entity line counts once per observation). */
export const MAX_IMPORT_RECORDS = 100_000;
/** Keys are the exporting side's ids or any client label up to this length. */
export const MAX_IMPORT_KEY_LENGTH = 256;
/** Export pages carry at most this many lines (and stay under a byte budget). */
export const MAX_EXPORT_PAGE_LINES = 500;

const importFormatSchema = z.enum(["3ngram", "mcp-memory", "mem0", "basic-memory"]);
export type ImportFormat = z.infer<typeof importFormatSchema>;

const edgeTypeSchema = z.enum(["supersedes", "updates", "extends", "derives"]);
export type EdgeType = z.infer<typeof edgeTypeSchema>;

/** Keys are compared exactly (no trimming): they are identifiers, not prose. */
const importKeySchema = storableText().min(1).max(MAX_IMPORT_KEY_LENGTH);

const importContentSchema = storableText().trim().min(1).max(MAX_IMPORT_CONTENT_LENGTH);

const after = (later: string | null | undefined, earlier: string | null | undefined) =>
  later === null || later === undefined || earlier === null || earlier === undefined || Date.parse(later) >= Date.parse(earlier);

/**
 * The bi-temporal columns of a memory or fact line: validFrom/recordedAt default to the import
 * time; a closing validTo needs the validFrom it closes, and a closing time needs a validTo.
 */
function checkTimes(
  v: { validFrom?: string | undefined; validTo: string | null; recordedAt?: string | undefined; closedRecordedAt: string | null },
  ctx: z.RefinementCtx,
): void {
  if (v.validTo !== null && v.validFrom === undefined) ctx.addIssue({ code: "custom", path: ["validFrom"], message: "required when validTo is given" });
  if (!after(v.validTo, v.validFrom)) ctx.addIssue({ code: "custom", path: ["validTo"], message: "must not be before validFrom" });
  if (v.closedRecordedAt !== null && v.validTo === null)
    ctx.addIssue({ code: "custom", path: ["closedRecordedAt"], message: "only a closed row (validTo set) has a closing time" });
  if (v.closedRecordedAt !== null && v.recordedAt === undefined)
    ctx.addIssue({ code: "custom", path: ["recordedAt"], message: "required when closedRecordedAt is given" });
  if (!after(v.closedRecordedAt, v.recordedAt)) ctx.addIssue({ code: "custom", path: ["closedRecordedAt"], message: "must not be before recordedAt" });
}

/** First line of an export: what wrote it and when. */
export const archiveHeaderSchema = z.strictObject({
  kind: z.literal("archive"),
  format: z.literal(ARCHIVE_FORMAT),
  version: z.literal(ARCHIVE_VERSION, { message: `unsupported archive version (this server reads version ${ARCHIVE_VERSION})` }),
  exportedAt: instantSchema,
});

/** A scope registry entry. Merged on import: an existing scope keeps its name and gains the aliases and projects. */
const archiveScopeSchema = z.strictObject({
  kind: z.literal("scope"),
  name: scopeNameSchema,
  aliases: z.array(scopeNameSchema).max(MAX_SCOPE_ALIASES).default([]),
  projects: z.array(projectSchema).max(MAX_SCOPE_PROJECTS).default([]),
});

const archivePolicySchema = z
  .strictObject({
    kind: z.literal("retrieval_policy"),
    mode: retrievalModeSchema,
    scope: scopeNameSchema.nullable().default(null),
  })
  .refine((v) => (v.mode === "default") === (v.scope !== null), { message: "mode default needs a scope; off and require take none", path: ["scope"] });

const archiveCommitmentSchema = z.strictObject({
  status: commitmentStatusSchema,
  owner: ownerSchema.nullable().default(null),
  dueAt: instantSchema.nullable().default(null),
  resolvedAt: instantSchema.nullable().default(null),
});

/**
 * A memory. `key` identifies it inside the archive (edges and facts refer to it) and makes the
 * import idempotent. Without `scope` the memory lands where a write without one would;
 * `commitment: null` means none, absent means "an open one for a commitment-type memory".
 */
const archiveMemorySchema = z
  .strictObject({
    kind: z.literal("memory"),
    key: importKeySchema,
    memoryType: memoryTypeSchema,
    topic: topicSchema,
    content: importContentSchema,
    scope: scopeNameSchema.optional(),
    project: projectSchema.nullable().default(null),
    tags: tagsSchema.default([]),
    status: memoryStatusSchema.default("active"),
    validFrom: instantSchema.optional(),
    validTo: instantSchema.nullable().default(null),
    recordedAt: instantSchema.optional(),
    closedRecordedAt: instantSchema.nullable().default(null),
    commitment: archiveCommitmentSchema.nullable().optional(),
    /** Present on an erased memory (docs/erasure.md): it is imported erased, and carries nothing but the marker. */
    erasedAt: instantSchema.optional(),
  })
  .superRefine(checkTimes)
  .superRefine(checkErased);

/** An erased memory's line holds the marker as topic and content and no tags, so an import can never revive text under it. */
function checkErased(v: { erasedAt?: string | undefined; topic: string; content: string; tags: string[] }, ctx: z.RefinementCtx): void {
  if (v.erasedAt === undefined) return;
  for (const field of ["topic", "content"] as const) {
    if (v[field] !== ERASED_MARKER) ctx.addIssue({ code: "custom", path: [field], message: `an erased memory's ${field} is ${ERASED_MARKER}` });
  }
  if (v.tags.length > 0) ctx.addIssue({ code: "custom", path: ["tags"], message: "an erased memory has no tags" });
}

/** A link between two memories of the archive: from = successor (newer), to = predecessor (older). */
const archiveEdgeSchema = z
  .strictObject({
    kind: z.literal("edge"),
    from: importKeySchema,
    to: importKeySchema,
    edgeType: edgeTypeSchema,
    recordedAt: instantSchema.optional(),
  })
  .refine((v) => v.from !== v.to, { message: "an edge links two different memories", path: ["to"] });

/** One generation of a fact, optionally tied to the memory (by key) that asserted it. */
const archiveFactSchema = z
  .strictObject({
    kind: z.literal("fact"),
    key: importKeySchema,
    memoryKey: importKeySchema.nullable().default(null),
    subject: factInputSchema.shape.subject,
    predicate: factInputSchema.shape.predicate,
    value: factInputSchema.shape.value,
    confidence: z.number().min(0).max(1).nullable().default(null),
    validFrom: instantSchema.optional(),
    validTo: instantSchema.nullable().default(null),
    recordedAt: instantSchema.optional(),
    closedRecordedAt: instantSchema.nullable().default(null),
  })
  .superRefine(checkTimes);

export const archiveRecordSchema = z.discriminatedUnion("kind", [
  archiveHeaderSchema,
  archiveScopeSchema,
  archivePolicySchema,
  archiveMemorySchema,
  archiveEdgeSchema,
  archiveFactSchema,
]);
/** A record as the importer sees it after validation (defaults applied). */
export type ArchiveRecord = z.output<typeof archiveRecordSchema>;
export type ArchiveMemory = z.output<typeof archiveMemorySchema>;
export type ArchiveFact = z.output<typeof archiveFactSchema>;
export type ArchiveEdge = z.output<typeof archiveEdgeSchema>;
export type ArchiveScope = z.output<typeof archiveScopeSchema>;
export type ArchivePolicy = z.output<typeof archivePolicySchema>;
export type ArchiveHeader = z.output<typeof archiveHeaderSchema>;
/** Exported lines carry every field explicitly, and erasedAt only for an erased memory (older readers refuse just those lines). */
export type ExportedMemory = Omit<Required<ArchiveMemory>, "erasedAt"> & Pick<ArchiveMemory, "erasedAt">;
export type ExportedFact = Required<ArchiveFact>;
export type ExportedEdge = Required<ArchiveEdge>;

/** The reference MCP memory server's knowledge-graph lines (extra keys some forks add are ignored). */
const mcpEntitySchema = z.object({
  type: z.literal("entity"),
  name: storableText().trim().min(1).max(256),
  entityType: storableText().trim().min(1).max(64),
  observations: z.array(storableText()).max(10_000),
});
const mcpRelationSchema = z.object({
  type: z.literal("relation"),
  from: storableText().trim().min(1).max(256),
  to: storableText().trim().min(1).max(2000),
  relationType: storableText().trim().min(1).max(256),
});
export const mcpMemoryLineSchema = z.discriminatedUnion("type", [mcpEntitySchema, mcpRelationSchema]);

/**
 * A time as mem0 writes it: ISO-8601 with a zone (its OSS store writes a UTC offset and
 * microseconds), read as the instant it names at millisecond precision. A time without a zone
 * names no instant, so it is refused rather than guessed.
 */
const mem0TimeSchema = z.iso.datetime({ offset: true, message: "must be an ISO-8601 timestamp with a time zone" }).transform((v) => new Date(v).toISOString());

const mem0IdSchema = storableText().trim().min(1).max(MAX_IMPORT_KEY_LENGTH);

/**
 * One memory of mem0's OSS `get_all` (its `results` items, the `MemoryItem` it returns): `memory`
 * is the text, `metadata` whatever the caller stored beside it. Keys mem0 adds in other versions
 * (`score`, `role`, `actor_id`, …) are ignored.
 */
export const mem0RecordSchema = z.object({
  id: mem0IdSchema,
  memory: z.string(),
  hash: z.string().nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  user_id: mem0IdSchema.nullish(),
  agent_id: mem0IdSchema.nullish(),
  run_id: mem0IdSchema.nullish(),
  categories: z.array(z.string()).max(1000).nullish(),
  created_at: mem0TimeSchema.nullish(),
  updated_at: mem0TimeSchema.nullish(),
});

/** The longest note path an import line may name (a path inside a basic-memory project folder). */
const MAX_NOTE_PATH_LENGTH = 1024;

/**
 * One basic-memory note as an import line: its path inside the project folder (`/` between
 * folders, as the tool writes permalinks) and the Markdown file's whole text. `project` files every
 * memory of the note under that project of ours; basic-memory's notes name none themselves.
 */
export const basicMemoryNoteSchema = z.strictObject({
  path: storableText().trim().min(1).max(MAX_NOTE_PATH_LENGTH),
  content: z.string(),
  project: projectSchema.optional(),
});

/** POST /api/v1/import?format=… (the body is the NDJSON itself). */
export const importQuerySchema = z.strictObject({ format: importFormatSchema.default("3ngram") });

const importOutcomeSchema = z.enum(["created", "skipped", "error"]);
export type ImportOutcome = z.infer<typeof importOutcomeSchema>;

/** What happened to one record: its 1-based line, and the id it was stored (or found) under. */
const importLineResultSchema = outputObject({
  line: z.int().min(1),
  outcome: importOutcomeSchema,
  id: z.string().optional(),
  reason: z.string().optional(),
  message: z.string().optional(),
});
export type ImportLineResult = z.infer<typeof importLineResultSchema>;

export const importOutputSchema = outputObject({
  format: importFormatSchema,
  results: z.array(importLineResultSchema),
  created: z.int().min(0),
  skipped: z.int().min(0),
  failed: z.int().min(0),
});
export type ImportOutput = z.infer<typeof importOutputSchema>;

/** One export page request: the opaque cursor of the previous page, absent for the first. */
export const exportInputSchema = z.strictObject({ cursor: storableText().min(1).max(4096).optional() });
