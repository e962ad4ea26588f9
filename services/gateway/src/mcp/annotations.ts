/**
 * The behaviour hints of every tool, stated explicitly in one table so they can be reviewed
 * together. They are not derived from the required scope: configure_scope and review_proposals
 * span reads and writes, so a scope → hint mapping would not be total.
 *
 * destructiveHint is false on every memory write, because append-and-supersede never destroys
 * memory data; configure_scope is the one destructive tool (delete removes a registry entry).
 * openWorldHint is false everywhere: every tool acts on this server's own store.
 *
 * Each tool module sets `annotations: TOOL_ANNOTATIONS.<name>`; a test checks that every
 * registered tool carries exactly its row and that every row belongs to a registered tool.
 */
import type { ToolName } from "./catalog.js";
import type { ToolHints } from "./tool.js";

/** Reads: safe to auto-approve and to repeat. */
const READ: ToolHints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
/** An append: repeating it appends again (or answers duplicate_memory). */
const APPEND: ToolHints = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

export const TOOL_ANNOTATIONS: Readonly<Record<ToolName, ToolHints>> = {
  briefing: READ,
  search: READ,
  get_memories: READ,
  get_facts: READ,
  handoff: READ,
  describe_environment: READ,
  remember: APPEND,
  // A memory can be revised once; a second identical call answers conflict rather than repeating.
  revise: APPEND,
  // Moving to the status a commitment already has is a no-op, so repeating a call changes nothing.
  resolve: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  // list reads; accept writes a fact or an edge; reject records a decision. Nothing is removed.
  review_proposals: APPEND,
  // delete removes a registry entry (memories keep their scope text), hence destructive.
  configure_scope: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
};
