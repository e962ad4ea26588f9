/**
 * configure_scope as the gateway runs it: each action is one registry RPC of the memory service,
 * called on the memory peer with the action's own fields, and answered in the tool's output shape.
 */
import type { ConfigureScopeInput, ConfigureScopeOutput } from "@3ngram/schema";
import type { ActionContext } from "./action-tools.js";

/** An action's fields: what its registry RPC takes. */
function fieldsOf<T extends { action: string }>({ action: _action, ...fields }: T): Omit<T, "action"> {
  return fields;
}

/** Runs one configure_scope action against the registry RPCs and answers in the tool's output shape. */
export async function configureScope(input: ConfigureScopeInput, { memory, ...options }: ActionContext): Promise<ConfigureScopeOutput> {
  const api = memory.scopes;
  switch (input.action) {
    case "list":
      return { action: "list", ...(await api.listScopes({}, options)) };
    case "create":
      return { action: "upserted", ...(await api.createScope(fieldsOf(input), options)) };
    case "rename":
      return { action: "upserted", ...(await api.renameScope(fieldsOf(input), options)) };
    case "set_aliases":
      return { action: "upserted", ...(await api.setScopeAliases(fieldsOf(input), options)) };
    case "set_mappings":
      return { action: "upserted", ...(await api.setScopeMappings(fieldsOf(input), options)) };
    case "delete":
      return { action: "deleted", ...(await api.deleteScope(fieldsOf(input), options)) };
    case "set_retrieval_default":
      return { action: "retrieval_default_set", ...(await api.setRetrievalDefault(fieldsOf(input), options)) };
  }
}
