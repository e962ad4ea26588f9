import { z } from "zod";
import { projectSchema, scopeNameSchema } from "./memory.js";
import { outputObject } from "./open-object.js";
import { perActionInput } from "./per-action.js";

export const MAX_SCOPE_ALIASES = 16;
export const MAX_SCOPE_PROJECTS = 64;

export const retrievalModeSchema = z.enum(["off", "default", "require"]);
export type RetrievalMode = z.infer<typeof retrievalModeSchema>;

const aliasesSchema = z.array(scopeNameSchema).max(MAX_SCOPE_ALIASES);
const projectsSchema = z.array(projectSchema).max(MAX_SCOPE_PROJECTS);

/**
 * configure_scope: the scope registry. Aliases and project mappings are honoured on every write
 * and read; delete removes only the registry entry (memories keep their scope). Advertised as one
 * flat object (see perActionInput); each action is still validated strictly.
 */
/** Each registry action's fields (the memory service's registry RPCs take these, without the action). */
export const scopeActionFields = {
  create: { name: scopeNameSchema, aliases: aliasesSchema.default([]) },
  rename: { name: scopeNameSchema, newName: scopeNameSchema },
  set_aliases: { name: scopeNameSchema, aliases: aliasesSchema },
  set_mappings: { name: scopeNameSchema, projects: projectsSchema },
  delete: { name: scopeNameSchema },
  set_retrieval_default: { mode: retrievalModeSchema, scope: scopeNameSchema.nullable().default(null) },
};

/** The retrieval default names a scope exactly in mode default. */
function scopeOnlyInDefaultMode(v: { mode: RetrievalMode; scope: string | null }, ctx: z.RefinementCtx): void {
  if ((v.mode === "default") !== (v.scope !== null))
    ctx.addIssue({ code: "custom", message: "mode default needs a scope; off and require take none", path: ["scope"] });
}

export const setRetrievalDefaultInputSchema = z.strictObject(scopeActionFields.set_retrieval_default).superRefine(scopeOnlyInDefaultMode);

/**
 * configure_scope: the scope registry. Aliases and project mappings are honoured on every write
 * and read; delete removes only the registry entry (memories keep their scope). Advertised as one
 * flat object (see perActionInput); each action is still validated strictly.
 */
export const configureScopeInputSchema = perActionInput("action", [
  z.strictObject({ action: z.literal("list") }),
  z.strictObject({ action: z.literal("create"), ...scopeActionFields.create }),
  z.strictObject({ action: z.literal("rename"), ...scopeActionFields.rename }),
  z.strictObject({ action: z.literal("set_aliases"), ...scopeActionFields.set_aliases }),
  z.strictObject({ action: z.literal("set_mappings"), ...scopeActionFields.set_mappings }),
  z.strictObject({ action: z.literal("delete"), ...scopeActionFields.delete }),
  z.strictObject({ action: z.literal("set_retrieval_default"), ...scopeActionFields.set_retrieval_default }).superRefine(scopeOnlyInDefaultMode),
]);
export type ConfigureScopeInput = z.infer<typeof configureScopeInputSchema>;

export const scopeRecordSchema = outputObject({
  id: z.string(),
  name: z.string(),
  aliases: z.array(z.string()),
  projects: z.array(z.string()),
  createdAt: z.string(),
});

export const retrievalPolicySchema = outputObject({
  mode: retrievalModeSchema,
  scope: z.string().nullable(),
});
export type RetrievalPolicy = z.infer<typeof retrievalPolicySchema>;

/** One object shape for every action (MCP output schemas must be objects); keys appear per action. */
export const configureScopeOutputSchema = outputObject({
  action: z.enum(["list", "upserted", "deleted", "retrieval_default_set"]),
  scopes: z.array(scopeRecordSchema).optional(),
  count: z.int().min(0).optional(),
  scope: scopeRecordSchema.optional(),
  name: z.string().optional(),
  policy: retrievalPolicySchema.optional(),
});
export type ConfigureScopeOutput = z.infer<typeof configureScopeOutputSchema>;
