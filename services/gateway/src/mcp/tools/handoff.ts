import { SCOPES } from "@3ngram/rpc";
import { MAX_EXCERPT_LENGTH, MAX_HANDOFF_SECTION, MAX_HANDOFF_SECTION_CEILING, handoffInputSchema, handoffOutputSchema } from "@3ngram/schema";
import { TOOL_ANNOTATIONS } from "../annotations.js";
import { defineTool } from "../tool.js";

export const handoffTool = defineTool({
  name: "handoff",
  title: "Hand off to another agent",
  description:
    "Hand work over to another agent, assistant, model or provider: exports the state of play they need to pick it " +
    "up and continue (live decisions, open and waiting commitments with due dates and owners, preferences and " +
    `blockers), each with an excerpt of up to ${MAX_EXCERPT_LENGTH} characters. selector is required, as in briefing ` +
    `(all, scope, project, scope_project); sectionLimit caps each list (default ${MAX_HANDOFF_SECTION}, max ` +
    `${MAX_HANDOFF_SECTION_CEILING}); counts gives exact totals and truncated says which lists were cut; generatedFor ` +
    "names the recipient and is echoed back; since (a changesCursor from an earlier handoff or briefing) keeps only what changed.",
  inputSchema: handoffInputSchema,
  outputSchema: handoffOutputSchema,
  requiredScope: SCOPES.read,
  annotations: TOOL_ANNOTATIONS.handoff,
  async run(input, { memory, identity }) {
    return memory.orientation.handoff(input, { identity });
  },
});
