/**
 * MCP-only shapes that are not tool inputs or outputs: the memory resource body and the prompt
 * arguments. Prompt arguments travel as strings (the protocol has no other kind).
 */
import { z } from "zod";
import { memoryTypeSchema, scopeNameSchema } from "./memory.js";
import { outputObject } from "./open-object.js";
import { briefingModeSchema, changesCursorSchema, effectiveSelectorSchema } from "./orientation.js";

/**
 * The most bytes one get_memories answer may put on the wire at its aggregate bound
 * (MAX_GET_TOTAL_CHARS of content): the structured result plus its JSON text mirror, which
 * escapes the already-serialised JSON a second time. The gateway's surface test measures the
 * worst shape (20 ids × 13107 characters of prose, every metadata field at its maximum) at
 * 684,935 bytes, about 2.6× the content; this leaves under 5% headroom, so raising a content or
 * metadata budget fails that test until this is raised on purpose.
 */
export const MAX_GET_MEMORIES_WIRE_BYTES = 700 * 1024;

/**
 * The body of `threengram://memory/{id}`: only the fields a memory never changes after it is
 * written. Status, validTo, supersededBy, tags and commitment state are left out on purpose, so
 * a long-lived private cache of this body can never go stale (a correction mints a new id).
 * `content` is the full stored text, up to the import bound.
 */
export const memoryResourceSchema = outputObject({
  id: z.string(),
  memoryType: memoryTypeSchema,
  topic: z.string(),
  content: z.string(),
  contentLength: z.int().min(0),
  scope: z.string(),
  project: z.string().nullable(),
  recordedAt: z.string(),
});

/** The selector kinds the briefing prompt renders, the same ones the briefing tool takes. */
const briefingPromptSelectorSchema = effectiveSelectorSchema.shape.kind;

/** prompts/get briefing: which selector to render, the mode to ask for, and the cursor of the last briefing. */
export const briefingPromptArgsSchema = z.strictObject({
  selector: briefingPromptSelectorSchema.describe("Which memories to brief on: all, scope, project or scope_project."),
  mode: briefingModeSchema.describe("brief (a few items per section, the default) or full.").optional(),
  since: changesCursorSchema.describe("The changesCursor of your last briefing with this selector: brief on what changed since.").optional(),
});
export type BriefingPromptArgs = z.infer<typeof briefingPromptArgsSchema>;

/**
 * prompts/get debrief: the scope the extracted memories go to. The gateway makes a fresh copy of
 * this field per request to attach its completion callback (the SDK marks the schema object).
 */
export const debriefScopeArgSchema = scopeNameSchema;
export interface DebriefPromptArgs {
  scope?: z.infer<typeof debriefScopeArgSchema>;
}
