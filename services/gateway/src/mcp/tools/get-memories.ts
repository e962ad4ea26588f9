import { SCOPES } from "@3ngram/rpc";
import { MAX_GET_CONTENT_CHARS, MAX_GET_MEMORIES_IDS, MAX_GET_TOTAL_CHARS, getMemoriesInputSchema, getMemoriesOutputSchema } from "@3ngram/schema";
import { TOOL_ANNOTATIONS } from "../annotations.js";
import { defineTool } from "../tool.js";

export const getMemoriesTool = defineTool({
  name: "get_memories",
  title: "Get memories by id",
  description:
    "Read memories in full by id: fetch the complete stored text and metadata, for search hits or handoff lines " +
    `marked truncated or any ids you already hold. Up to ${MAX_GET_MEMORIES_IDS} ids per call; maxContentChars caps ` +
    `each memory (default 10000, max ${MAX_GET_CONTENT_CHARS}) and ids × maxContentChars may not exceed ` +
    `${MAX_GET_TOTAL_CHARS}. Unknown ids come back in notFound instead of failing the call.`,
  inputSchema: getMemoriesInputSchema,
  outputSchema: getMemoriesOutputSchema,
  requiredScope: SCOPES.read,
  annotations: TOOL_ANNOTATIONS.get_memories,
  async run(input, { memory, identity }) {
    return memory.memories.getMemories(input, { identity });
  },
});
