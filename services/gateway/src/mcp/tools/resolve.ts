import { SCOPES } from "@3ngram/rpc";
import { resolveInputSchema, resolveOutputSchema } from "@3ngram/schema";
import { TOOL_ANNOTATIONS } from "../annotations.js";
import { defineTool } from "../tool.js";

export const resolveTool = defineTool({
  name: "resolve",
  title: "Resolve a commitment or blocker",
  description:
    "Settle a commitment or blocker by memoryId: mark a commitment done (resolved), on hold (waiting) or lapsed " +
    '(expired); status "open" reopens a resolved or expired one (the unresolve direction). Allowed moves: open ⇄ ' +
    "waiting; open or waiting → resolved or expired; resolved or expired → open. Asking for the current status " +
    "changes nothing; any other move answers invalid_transition. A blocker that is cleared (resolved or expired) is " +
    "archived. Other memories answer not_found.",
  inputSchema: resolveInputSchema,
  outputSchema: resolveOutputSchema,
  requiredScope: SCOPES.write,
  annotations: TOOL_ANNOTATIONS.resolve,
  async run(input, { memory, identity }) {
    return memory.memories.resolve(input, { identity });
  },
});
