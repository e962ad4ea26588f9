import { SCOPES } from "@3ngram/rpc";
import { resolveInputSchema, resolveOutputSchema } from "@3ngram/schema";
import { toResolveOutput, toResolveRequest } from "../../clients/lifecycle.js";
import { defineTool } from "../tool.js";

export const resolveTool = defineTool({
  name: "resolve",
  title: "Resolve a commitment or blocker",
  description:
    "Change the status of a commitment memory (memoryId): open, waiting, resolved or expired. Status \"open\" is " +
    "the unresolve direction: it reopens a resolved or expired commitment. Allowed moves: open ⇄ waiting, open or " +
    "waiting → resolved or expired, resolved → open, expired → open; asking for the current status changes nothing; " +
    "any other move answers invalid_transition. For a blocker memory, resolved or expired archives it (status " +
    '"archived"). Other memories have no commitment and answer not_found.',
  inputSchema: resolveInputSchema,
  outputSchema: resolveOutputSchema,
  requiredScope: SCOPES.write,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(input, { memory, identity }) {
    return toResolveOutput(await memory.resolve(toResolveRequest(input), { identity }));
  },
});
