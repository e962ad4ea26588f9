import { SCOPES } from "@3ngram/rpc";
import { describeEnvironmentInputSchema, describeEnvironmentOutputSchema } from "@3ngram/schema";
import { describeEnvironment } from "../../clients/orientation.js";
import { TOOL_ANNOTATIONS } from "../annotations.js";
import { surfaceInfo } from "../catalog.js";
import { defineTool } from "../tool.js";

export const describeEnvironmentTool = defineTool({
  name: "describe_environment",
  title: "Describe this memory server",
  description:
    "Describe this memory server: what it can do, how it is configured and what it holds. Reports the tools and " +
    "version, the embedding model, which search legs and background queues are live, the registered scopes and " +
    "retrieval default, and counts: how many memories are stored by type, how many are live, superseded or archived, " +
    "commitments by status, proposals awaiting review, queued and failed background jobs. No arguments; no secrets.",
  inputSchema: describeEnvironmentInputSchema,
  outputSchema: describeEnvironmentOutputSchema,
  requiredScope: SCOPES.read,
  annotations: TOOL_ANNOTATIONS.describe_environment,
  async run(_input, { memory, identity }) {
    return describeEnvironment(memory, identity, surfaceInfo());
  },
});
