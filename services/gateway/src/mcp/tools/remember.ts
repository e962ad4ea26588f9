import { SCOPES } from "@3ngram/rpc";
import { MAX_CONTENT_LENGTH, rememberInputSchema, rememberOutputSchema } from "@3ngram/schema";
import { toRememberOutput, toRememberRequest } from "../../clients/memory.js";
import { defineTool } from "../tool.js";

export const rememberTool = defineTool({
  name: "remember",
  title: "Remember",
  description:
    "Store one durable memory: a decision, commitment, blocker, preference, pattern, fact, note or event " +
    "worth recalling in a later session or by another agent. Use it when something is settled or promised, " +
    "not for transcript noise. Give a short topic, self-contained content " +
    `(at most ${MAX_CONTENT_LENGTH} characters), a kebab-case scope (default "personal") and the project when ` +
    "there is one. Memories are never edited in place; returns the new memory's id.",
  inputSchema: rememberInputSchema,
  outputSchema: rememberOutputSchema,
  requiredScope: SCOPES.write,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(input, { memory, identity }) {
    return toRememberOutput(await memory.remember(toRememberRequest(input), { identity }));
  },
});
