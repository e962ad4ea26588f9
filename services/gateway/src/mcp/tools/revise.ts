import { SCOPES } from "@3ngram/rpc";
import { MAX_CONTENT_LENGTH, reviseInputSchema, reviseOutputSchema } from "@3ngram/schema";
import { toReviseOutput, toReviseRequest } from "../../clients/lifecycle.js";
import { defineTool } from "../tool.js";

export const reviseTool = defineTool({
  name: "revise",
  title: "Revise a memory",
  description:
    "Correct or update a stored memory without losing it: writes a new memory (same fields as remember, content " +
    `at most ${MAX_CONTENT_LENGTH} characters) linked to predecessorId by a "supersedes" (default: the old one was ` +
    'wrong or replaced) or "updates" (the old one is outdated) edge. The old memory keeps its content and becomes ' +
    "history; reads show it superseded by the new id. A memory can be revised once: revising an old version answers " +
    "conflict naming the current one. A commitment's status, owner and dueAt carry over to a revised commitment.",
  inputSchema: reviseInputSchema,
  outputSchema: reviseOutputSchema,
  requiredScope: SCOPES.write,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(input, { memory, identity }) {
    return toReviseOutput(await memory.revise(toReviseRequest(input), { identity }));
  },
});
