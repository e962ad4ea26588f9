import { MAX_SCOPE_ALIASES, MAX_SCOPE_PROJECTS, configureScopeInputSchema, configureScopeOutputSchema } from "@3ngram/schema";
import { actionAccess } from "../../clients/action-tools.js";
import { configureScope } from "../../clients/scopes.js";
import { TOOL_ANNOTATIONS } from "../annotations.js";
import { defineTool } from "../tool.js";

export const configureScopeTool = defineTool({
  name: "configure_scope",
  title: "Configure scopes",
  description:
    "Create, rename or delete scopes, the named areas memories are filed under; list them, give one aliases, map " +
    "projects to it, or set the retrieval default. One action per call: list; create {name, aliases?}; rename {name, " +
    "newName} (the old name stays as an alias); set_aliases {name, aliases} and set_mappings {name, projects} (each " +
    `replaces the whole list; at most ${MAX_SCOPE_ALIASES} aliases and ${MAX_SCOPE_PROJECTS} projects); delete {name} (the ` +
    "registry entry only, memories keep their scope); set_retrieval_default {mode: off | default | require, scope for " +
    "default}. Aliases resolve to their scope on every read and write, and remember with only a mapped project lands in " +
    "its scope. Names are kebab-case and unique across scopes and aliases; a project maps to one scope at most.",
  inputSchema: configureScopeInputSchema,
  outputSchema: configureScopeOutputSchema,
  requiredScope: actionAccess,
  annotations: TOOL_ANNOTATIONS.configure_scope,
  run: configureScope,
});
