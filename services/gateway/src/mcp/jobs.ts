/**
 * The jobs-to-be-done table the MCP surface is designed from, and the server instructions built
 * from it. They live together so they change together: the instructions are a compressed form of
 * this table plus a few rules that hold across every tool.
 *
 * The instructions are advertised as `instructions` on server/discover (2026-07-28) and on
 * initialize (2025-era). Clients that surface them put them in the model's context on every turn,
 * where they compete with the tool descriptions for attention, so they stay short: one line per job
 * and only the rules no single tool description can state.
 */
import type { ToolName } from "./catalog.js";

export interface Job {
  /** What the agent is trying to get done, in its own terms. */
  job: string;
  /** The one tool that does it. */
  tool: ToolName;
  /** When to reach for it, and what to keep in mind. */
  when: string;
}

/** One job per tool, in the order an agent meets them in a session. */
export const JOBS: readonly Job[] = [
  {
    job: "Get oriented",
    tool: "briefing",
    when:
      "at the start of a session and on switching scope or project; always name the selector (all, scope, project or scope_project); " +
      "pass the changesCursor kept from the last briefing as since to read only what changed",
  },
  {
    job: "Recall what was decided, promised or learned",
    tool: "search",
    when: "before answering from memory or saying something was never recorded; coverage.abstained means nothing relevant is stored",
  },
  { job: "Read memories in full", tool: "get_memories", when: "when a search hit is truncated or you already hold the ids" },
  {
    job: "Keep something for later",
    tool: "remember",
    when: "for decisions, commitments, blockers, preferences, patterns, facts and notes worth recalling, not transcript noise or what can be re-derived",
  },
  { job: "Correct or update a stored memory", tool: "revise", when: "when it is wrong or outdated; never write a second remember instead" },
  { job: "Settle a commitment or blocker", tool: "resolve", when: "when it is done, waiting, expired or reopened" },
  { job: "Track a measured value", tool: "get_facts", when: "for a subject's value now, at a past moment, or its history over a window" },
  { job: "Hand work to another agent", tool: "handoff", when: "when another agent or provider takes over, with an explicit selector" },
  { job: "Organise scopes", tool: "configure_scope", when: "to list scopes, add aliases, map projects to scopes or set the retrieval default" },
  {
    job: "Review background proposals",
    tool: "review_proposals",
    when: "when the user wants to accept or reject suggested links or extracted facts; nothing proposed counts until accepted",
  },
  { job: "See what this server holds", tool: "describe_environment", when: "when unsure which scopes exist, what is configured or how much is stored" },
];

/** Rules that hold across tools, so no single description carries them. */
export const SURFACE_RULES: readonly string[] = [
  "Memory is append-only: nothing is edited in place or deleted, so correct with revise and settle with resolve.",
  "Set scope (kebab-case) and project on every write; a memory without the project is missing from that project's briefing.",
  "One self-contained memory per remember; never store secrets.",
];

/** The server instructions: the table, one line per job, then the rules. */
export const SERVER_INSTRUCTIONS = [
  "3ngram is the user's durable memory, shared across sessions and agents. Pick the tool by the job:",
  ...JOBS.map((j) => `- ${j.job}: ${j.tool}, ${j.when}.`),
  ...SURFACE_RULES,
].join("\n");
