/**
 * The names the MCP surface is built from, in one place: the tools (in the order an agent should
 * learn them), the prompts and the resource template. The jobs table, the annotations table and
 * the header pre-parser's allowlists are all keyed by these, so adding a tool starts here.
 */

export const TOOL_NAMES = [
  "briefing",
  "search",
  "get_memories",
  "remember",
  "revise",
  "resolve",
  "get_facts",
  "handoff",
  "configure_scope",
  "review_proposals",
  "describe_environment",
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export const SERVER_NAME = "3ngram";
export const SERVER_VERSION = "0.1.0";

/** The tools and the server version, as describe_environment (MCP and REST) reports them. */
export function surfaceInfo(): { tools: string[]; version: string } {
  return { tools: [...TOOL_NAMES], version: SERVER_VERSION };
}

export const PROMPT_NAMES = ["briefing", "debrief"] as const;

/** The scheme cannot be "3ngram": a URI scheme must start with a letter. */
export const MEMORY_RESOURCE_SCHEME = "threengram";
export const MEMORY_RESOURCE_TEMPLATE = `${MEMORY_RESOURCE_SCHEME}://memory/{id}`;
export const MEMORY_RESOURCE_NAME = "memory";
