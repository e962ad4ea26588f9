import type { CallerIdentity, Scope } from "@3ngram/rpc";
import type { z } from "zod";
import type { MemoryPeer } from "../clients/memory.js";
import type { SearchPeer } from "../clients/search.js";

/** The four behaviour hints every tool states explicitly (no SDK defaults). */
export interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

interface ToolContext {
  identity: CallerIdentity;
  memory: MemoryPeer;
  search: SearchPeer;
}

/**
 * One MCP tool: its advertised contract (shared zod schemas, hints) and the service call it maps
 * to. `run` receives input server.ts has already parsed with `inputSchema` (the SDK only advertises
 * the schema; a call whose arguments do not parse never reaches `run`) and returns the peer's
 * answer, which the bridge already reads in `outputSchema`'s shape and key order; server.ts sends it
 * as it is (the tool-outputs test checks every tool's answer against its schema).
 */
export interface ToolDefinition<I extends z.ZodType, O extends z.ZodType> {
  name: string;
  title: string;
  description: string;
  inputSchema: I;
  outputSchema: O;
  /** The scope the caller must hold; a function when it depends on the input (configure_scope: list reads, the rest write). */
  requiredScope: Scope | ((input: z.output<I>) => Scope);
  annotations: ToolHints;
  run(input: z.output<I>, ctx: ToolContext): Promise<z.output<O>>;
}

export function defineTool<I extends z.ZodType, O extends z.ZodType>(tool: ToolDefinition<I, O>): ToolDefinition<I, O> {
  return tool;
}
