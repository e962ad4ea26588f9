import { SCOPES } from "@3ngram/rpc";
import { DEFAULT_FACTS_LIMIT, MAX_FACTS_LIMIT, getFactsInputSchema, getFactsOutputSchema } from "@3ngram/schema";
import { toGetFactsOutput, toGetFactsRequest } from "../../clients/facts.js";
import { defineTool } from "../tool.js";

export const getFactsTool = defineTool({
  name: "get_facts",
  title: "Get facts",
  description:
    "Look up structured facts (subject / predicate / value triples stored with remember) and how they changed over time. " +
    "One value per subject and predicate at a time, with the unit in the predicate (e.g. top_set.weight_kg = \"100\"). " +
    "Without asOf or range: the values true now. " +
    "asOf {validAt?, asKnownAt?}: the values true at validAt according to what had been recorded by asKnownAt " +
    "(asKnownAt alone replays exactly what was known then; validAt alone asks about that moment with today's knowledge). " +
    "range {from?, to?}: every value whose validity overlaps the window, oldest first — the history of a measure. " +
    "asOf and range cannot be combined. subject and predicate match exactly and are optional; " +
    `limit defaults to ${DEFAULT_FACTS_LIMIT} (max ${MAX_FACTS_LIMIT}).`,
  inputSchema: getFactsInputSchema,
  outputSchema: getFactsOutputSchema,
  requiredScope: SCOPES.read,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(input, { memory, identity }) {
    return toGetFactsOutput(await memory.getFacts(toGetFactsRequest(input), { identity }));
  },
});
