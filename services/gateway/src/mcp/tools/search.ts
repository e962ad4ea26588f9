import { SCOPES } from "@3ngram/rpc";
import { MAX_EXCERPT_LENGTH, MAX_SEARCH_LIMIT, searchInputSchema, searchOutputSchema } from "@3ngram/schema";
import { toSearchOutput, toSearchRequest } from "../../clients/search.js";
import { defineTool } from "../tool.js";

export const searchTool = defineTool({
  name: "search",
  title: "Search memories",
  description:
    "Find stored memories relevant to a question or topic, ranked by meaning, keywords and recency. Use it " +
    "before answering from memory or claiming something was never decided. Filter by memoryType(s), scope, " +
    `project or status; returns at most ${MAX_SEARCH_LIMIT} hits (default 5) with excerpts of up to ` +
    `${MAX_EXCERPT_LENGTH} characters, plus a coverage envelope whose "abstained" flag says nothing relevant ` +
    "was found. Read full text with get_memories.",
  inputSchema: searchInputSchema,
  outputSchema: searchOutputSchema,
  requiredScope: SCOPES.read,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(input, { search, identity }) {
    return toSearchOutput(await search.search(toSearchRequest(input), { identity }));
  },
});
