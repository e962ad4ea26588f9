import { SCOPES } from "@3ngram/rpc";
import { DEFAULT_FACTS_LIMIT, MAX_FACTS_LIMIT, getFactsInputSchema, getFactsOutputSchema } from "@3ngram/schema";
import { TOOL_ANNOTATIONS } from "../annotations.js";
import { defineTool } from "../tool.js";

export const getFactsTool = defineTool({
  name: "get_facts",
  title: "Get facts",
  description:
    "Look up measurements and other facts (subject / predicate / value, stored with remember), such as a weight, a " +
    "cost, a latency or a headcount: a subject's current value, its value as of a past date, or the history of its " +
    'values over time. The unit lives in the predicate (top_set.weight_kg = "100"). Default: the values true now. ' +
    "asOf {validAt?, asKnownAt?}: true at validAt as recorded by asKnownAt (asKnownAt alone replays what was known " +
    "then). range {from?, to?}: every value valid in the window, oldest first. asOf and range cannot be combined. " +
    `subject and predicate match exactly and are optional; limit ${DEFAULT_FACTS_LIMIT} by default (max ${MAX_FACTS_LIMIT}).`,
  inputSchema: getFactsInputSchema,
  outputSchema: getFactsOutputSchema,
  requiredScope: SCOPES.read,
  annotations: TOOL_ANNOTATIONS.get_facts,
  async run(input, { memory, identity }) {
    return memory.memories.getFacts(input, { identity });
  },
});
