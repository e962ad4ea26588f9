import { MAX_SCOPE_ALIASES, MAX_SCOPE_PROJECTS, configureScopeInputSchema, configureScopeOutputSchema } from "@3ngram/schema";
import { configureScope, configureScopeAccess } from "../../clients/scopes.js";
import { defineTool } from "../tool.js";

export const configureScopeTool = defineTool({
  name: "configure_scope",
  title: "Configure scopes",
  description:
    "Manage the scope registry: the named partitions memories are stored under. Pick one action: " +
    "list (the registered scopes with their aliases and mapped projects, plus the retrieval default); " +
    `create {name, aliases?}; rename {name, newName} (the old name stays as an alias); set_aliases {name, aliases} ` +
    `and set_mappings {name, projects} (each replaces the whole list; at most ${MAX_SCOPE_ALIASES} aliases and ` +
    `${MAX_SCOPE_PROJECTS} projects per scope); delete {name} (removes the registry entry only, memories keep their ` +
    "scope); set_retrieval_default {mode: off | default | require, scope only for default}. A write or search naming " +
    "an alias uses the scope it belongs to; remember with only a mapped project lands in that project's scope. " +
    "Names and aliases are kebab-case and unique across all scopes; a project maps to one scope at most.",
  inputSchema: configureScopeInputSchema,
  outputSchema: configureScopeOutputSchema,
  requiredScope: configureScopeAccess,
  // Destructive: delete removes a registry entry (and may switch the retrieval default to require).
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async run(input, { memory, identity }) {
    return configureScope(memory, input, { identity });
  },
});
