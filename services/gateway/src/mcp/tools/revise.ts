import { SCOPES } from "@3ngram/rpc";
import { MAX_CONTENT_LENGTH, reviseInputSchema, reviseOutputSchema } from "@3ngram/schema";
import { TOOL_ANNOTATIONS } from "../annotations.js";
import { defineTool } from "../tool.js";

export const reviseTool = defineTool({
  name: "revise",
  title: "Revise a memory",
  description:
    "Correct or update a stored memory that is wrong or outdated, without losing it: writes the corrected version as " +
    `a new memory (same fields as remember, content at most ${MAX_CONTENT_LENGTH} characters) linked to predecessorId ` +
    'by "supersedes" (default: the old one was wrong or is replaced) or "updates" (the old one is out of date). The ' +
    "old memory keeps its content as history and shows it was superseded. A memory can be revised once: revising an " +
    "older version answers conflict naming the current one. A commitment's status, owner and dueAt carry over. Pass " +
    "validFrom when the change took effect earlier than now: the old version stops being valid there.",
  inputSchema: reviseInputSchema,
  outputSchema: reviseOutputSchema,
  requiredScope: SCOPES.write,
  annotations: TOOL_ANNOTATIONS.revise,
  async run(input, { memory, identity }) {
    return memory.memories.revise(input, { identity });
  },
});
