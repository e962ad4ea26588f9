/**
 * Erasure: removing a memory's text, and every copy derived from it, from an append-only store
 * (docs/erasure.md). REST and the operator command only; never an MCP tool. What an erased
 * memory keeps (id, type, scope, project, times, edges, events) and what it loses is decided by
 * the database function behind it (migration 0009); these are the shapes of asking for it.
 */
import { z } from "zod";
import { storableText } from "./storable-text.js";
import { factInputSchema, memoryIdSchema, projectSchema, scopeNameSchema, topicSchema } from "./memory.js";
import { outputObject } from "./open-object.js";

/** What an erased memory's topic and content (and its facts' fields, and quoting rationales) read. */
export const ERASED_MARKER = "[erased]";

/** At most this many ids per request. */
const MAX_ERASE_IDS = 100;
/** A selector erases at most this many memories per request; `remaining` says whether to call again. */
export const MAX_ERASE_BATCH = 500;

/**
 * Why, as a closed list: the audit trail must never hold prose, and a free-text reason is where
 * someone would write the very thing being erased.
 */
const erasureReasonSchema = z.enum(["data_subject_request", "secret", "mistake", "other"]);
export type ErasureReason = z.infer<typeof erasureReasonSchema>;

/** A ticket or case number: identifier characters only (no spaces), so it cannot carry prose. */
const erasureReferenceSchema = storableText().regex(/^[A-Za-z0-9][A-Za-z0-9._:/#-]{0,127}$/, {
  message: "must be a ticket or case id: letters, digits and . _ : / # - (at most 128, no spaces)",
});

/**
 * Which memories: every given field must match. `scope` resolves through the registry (a name or
 * an alias matches all of the scope's names), `project` and `topic` match exactly, and `subject`
 * picks the memories that asserted a fact about it or had one extracted from them (the subject's
 * facts that no memory asserted are erased with them).
 */
const erasureSelectorSchema = z
  .strictObject({
    scope: scopeNameSchema.optional(),
    project: projectSchema.optional(),
    topic: topicSchema.optional(),
    subject: factInputSchema.shape.subject.optional(),
  })
  .refine((s) => Object.values(s).some((v) => v !== undefined), { message: "give at least one of scope, project, topic, subject" });
export type ErasureSelector = z.infer<typeof erasureSelectorSchema>;

/** POST /api/v1/memories/:id/erase: the id is in the path. */
export const eraseOneBodySchema = z.strictObject({
  reason: erasureReasonSchema,
  reference: erasureReferenceSchema.optional(),
});

/** POST /api/v1/erasures: ids or a selector (exactly one), and with dryRun only the count and ids it would erase. */
export const eraseInputSchema = z
  .strictObject({
    ids: z.array(memoryIdSchema).min(1).max(MAX_ERASE_IDS).optional(),
    selector: erasureSelectorSchema.optional(),
    reason: erasureReasonSchema,
    reference: erasureReferenceSchema.optional(),
    dryRun: z.boolean().default(false),
  })
  .superRefine((v, ctx) => {
    if ((v.ids === undefined) === (v.selector === undefined))
      ctx.addIssue({ code: "custom", path: ["selector"], message: "give exactly one of ids and selector" });
  });
export type EraseInput = z.infer<typeof eraseInputSchema>;

export const eraseOutputSchema = outputObject({
  /** The audit record of this request; null when nothing was erased (or on a dry run). */
  erasureId: z.string().nullable(),
  dryRun: z.boolean(),
  /** Erased by this request (on a dry run: what it would erase). */
  erased: z.array(z.string()),
  /** Ids given that were erased before. */
  alreadyErased: z.array(z.string()),
  /** Ids given that are unknown (or another tenant's, which looks the same). */
  notFound: z.array(z.string()),
  /** Facts whose subject, predicate and value were erased (on a dry run: would be). */
  factsErased: z.int().min(0),
  /** A selector's matches left for another request (on a dry run: beyond those listed); call again while above 0. */
  remaining: z.int().min(0),
});
