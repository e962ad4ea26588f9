import { SCOPES } from "@3ngram/rpc";
import { MAX_CONTENT_LENGTH, rememberInputSchema, rememberOutputSchema } from "@3ngram/schema";
import { TOOL_ANNOTATIONS } from "../annotations.js";
import { defineTool } from "../tool.js";

export const rememberTool = defineTool({
  name: "remember",
  title: "Remember",
  description:
    "Save, record or write down something worth keeping for later sessions or other agents: a decision the user " +
    "made, a commitment someone promised (with dueAt and owner), a blocker, a preference, a pattern, a fact, a note " +
    "or an event. Use it when something is decided, promised, preferred or learned, not for transcript noise. One " +
    `self-contained memory per call: a short topic, content of at most ${MAX_CONTENT_LENGTH} characters, a kebab-case ` +
    'scope (default "personal") and the project when there is one; measurable values can ride along as facts ' +
    "(subject, predicate with the unit, value). Pass validFrom when it happened earlier than now (a decision made on " +
    "Monday recorded on Friday). Never edits an existing memory (use revise); returns the new memory's id.",
  inputSchema: rememberInputSchema,
  outputSchema: rememberOutputSchema,
  requiredScope: SCOPES.write,
  annotations: TOOL_ANNOTATIONS.remember,
  async run(input, { memory, identity }) {
    return memory.memories.remember(input, { identity });
  },
});
