import { SCOPES } from "@3ngram/rpc";
import { DEFAULT_SEARCH_LIMIT, MAX_EXCERPT_LENGTH, MAX_SEARCH_LIMIT, searchInputSchema, searchOutputSchema } from "@3ngram/schema";
import { TOOL_ANNOTATIONS } from "../annotations.js";
import { defineTool } from "../tool.js";

export const searchTool = defineTool({
  name: "search",
  title: "Search memories",
  description:
    "Recall what is stored: find memories about a question or topic, such as what was decided, promised, preferred " +
    "or noted, and whether anything was ever recorded about it, ranked by meaning, keywords and recency. Use it " +
    "before answering from memory or saying something was never decided or discussed. Filters: memoryType or " +
    "memoryTypes, scope, project or projects, status (archived memories only when asked), recordedAfter/recordedBefore, " +
    "and asOf {validAt, asKnownAt} for what was true, or known, at a past instant; superseded memories still appear, " +
    'ranked below their successors. order "chronological" lists every match newest first instead of ranking (query ' +
    `optional when a filter is given). At most ${MAX_SEARCH_LIMIT} hits (default ${DEFAULT_SEARCH_LIMIT}), each with an ` +
    `excerpt of up to ${MAX_EXCERPT_LENGTH} characters; projection "compact" returns only id, memoryType, topic and ` +
    "score. When hasMore, pass nextCursor back with the same query and filters for the next page. coverage.abstained " +
    "true means nothing relevant is stored: say so rather than guess. Read a hit in full with get_memories.",
  inputSchema: searchInputSchema,
  outputSchema: searchOutputSchema,
  requiredScope: SCOPES.read,
  annotations: TOOL_ANNOTATIONS.search,
  async run(input, { search, identity }) {
    return search.search.search(input, { identity });
  },
});
