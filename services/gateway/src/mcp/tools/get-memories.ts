import { SCOPES } from "@3ngram/rpc";
import { MAX_GET_CONTENT_CHARS, MAX_GET_MEMORIES_IDS, MAX_GET_TOTAL_CHARS, getMemoriesInputSchema, getMemoriesOutputSchema } from "@3ngram/schema";
import { toGetMemoriesOutput, toGetMemoriesRequest } from "../../clients/memory.js";
import { defineTool } from "../tool.js";

export const getMemoriesTool = defineTool({
  name: "get_memories",
  title: "Get memories by id",
  description:
    "Read the full stored text and metadata of memories you already have ids for, typically from search " +
    `hits marked truncated. Up to ${MAX_GET_MEMORIES_IDS} ids per call; maxContentChars caps each memory ` +
    `(default 10000, max ${MAX_GET_CONTENT_CHARS}) and ids × maxContentChars may not exceed ${MAX_GET_TOTAL_CHARS}. ` +
    "Unknown ids are listed in notFound rather than failing the call.",
  inputSchema: getMemoriesInputSchema,
  outputSchema: getMemoriesOutputSchema,
  requiredScope: SCOPES.read,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(input, { memory, identity }) {
    return toGetMemoriesOutput(await memory.getMemories(toGetMemoriesRequest(input), { identity }));
  },
});
