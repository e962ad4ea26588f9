/**
 * The two prompts: code-defined templates that render one user message. They never read or write
 * memory themselves; they tell the model which tools to call. `debrief.scope` is the one
 * completable argument (the protocol completes prompt and resource arguments only, never tool
 * arguments), answered from the tenant's live scope facets.
 */
import { SCOPES } from "@3ngram/rpc";
import { errorSummary, type Logger } from "@3ngram/runtime";
import {
  DEFAULT_SCOPE,
  MAX_CONTENT_LENGTH,
  briefingPromptArgsSchema,
  debriefScopeArgSchema,
  type BriefingPromptArgs,
  type DebriefPromptArgs,
} from "@3ngram/schema";
import { completable, type GetPromptResult, type McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { MemoryPeer } from "../clients/memory.js";
import { completeScopes } from "../clients/surface.js";
import type { Principal } from "../http/locals.js";
import type { GatewayMetrics } from "../http/metrics.js";
import type { LayerLimiter } from "../ratelimit/limiter.js";
import { userLimitKey } from "../ratelimit/keys.js";

export interface PromptDeps {
  memory: MemoryPeer;
  log: Logger;
  metrics: GatewayMetrics;
  /** Per-user limiter for completion/complete, shared by every request this endpoint serves. */
  completionLimiter: LayerLimiter;
  /** The verified caller of this request (from the bearer middleware), never anything the request body says. */
  principal: Principal | undefined;
}

const SELECTOR_EXAMPLES: Record<BriefingPromptArgs["selector"], string> = {
  all: '{"kind":"all"}',
  scope: '{"kind":"scope","scope":"<your-scope>"}',
  project: '{"kind":"project","project":"<your-project>"}',
  scope_project: '{"kind":"scope_project","scope":"<your-scope>","project":"<your-project>"}',
};

export function renderBriefingPrompt(args: BriefingPromptArgs): string {
  const mode = args.mode ?? "brief";
  const placeholders = args.selector === "all" ? "" : " Replace the <your-…> placeholders with the scope or project this session is about.";
  const since = args.since === undefined ? "" : `,"since":${JSON.stringify(args.since)}`;
  return [
    `Before starting, orient yourself from 3ngram memory: call the briefing tool with {"selector":${SELECTOR_EXAMPLES[args.selector]},"mode":"${mode}"${since}}.${placeholders}`,
    ...(args.since === undefined
      ? []
      : [
          "That lists only what changed since your last briefing: each item says whether it is new, superseded, resolved, expired, archived or erased. " +
            "If since is refused (stale, or issued for another selector), call briefing again without it.",
        ]),
    "Read overdue and open commitments first, then blockers, recent decisions and preferences, and keep them in mind for the rest of the session.",
    "The briefing names memories by topic only: use search to recall more about one, and get_memories to read a memory in full.",
    "Keep the changesCursor it returns: next session, pass it as since with the same selector to read only what changed in between.",
  ].join("\n");
}

export function renderDebriefPrompt(args: DebriefPromptArgs): string {
  const scope = args.scope === undefined ? `the scope the work belongs to (default "${DEFAULT_SCOPE}")` : `scope "${args.scope}"`;
  return [
    `Debrief this session into 3ngram memory before it ends. Store each durable item as its own memory with the remember tool, under ${scope}, and set project when the work belongs to one:`,
    '- decisions that were made: memoryType "decision";',
    '- commitments (who will do what): memoryType "commitment", with dueAt when a date was agreed and owner when known;',
    '- blockers that are still open: memoryType "blocker";',
    '- follow-ups and the state someone picking this up needs: memoryType "note";',
    '- preferences and recurring patterns: memoryType "preference" or "pattern";',
    "- measured values: as facts on the memory (subject, predicate with the unit, value).",
    `Keep each memory atomic and self-contained (content at most ${MAX_CONTENT_LENGTH} characters; split longer items). ` +
      "If something already stored has changed, revise that memory instead of remembering it again, and resolve the commitments and blockers settled in this session. " +
      "Never store secrets, credentials or tokens.",
    "If your client keeps state between sessions, finish with a briefing for the same scope and keep its changesCursor: the next session passes it as since and reads only what changed.",
  ].join("\n");
}

function userMessage(text: string): GetPromptResult {
  return { messages: [{ role: "user", content: { type: "text", text } }] };
}

/**
 * Completion for debrief.scope: the tenant's live scope names starting with what was typed. The
 * tenant comes from the verified principal only. No read scope, the per-user limit reached, or a
 * failed read all answer an empty list: completion is a typing aid, and failing quietly is the
 * right shape mid-keystroke (the counter records which it was).
 */
async function completeDebriefScope(deps: PromptDeps, typed: string): Promise<string[]> {
  const { principal, metrics } = deps;
  if (principal === undefined || !principal.scopes.includes(SCOPES.read)) {
    metrics.mcpCompletions.inc({ outcome: "denied" });
    return [];
  }
  const quota = await deps.completionLimiter.consume(userLimitKey(principal));
  if (!quota.allowed) {
    metrics.mcpCompletions.inc({ outcome: "rate_limited" });
    metrics.rateLimited.inc({ layer: "completion" });
    return [];
  }
  try {
    const identity = { tenantId: principal.tenantId, userId: principal.userId, scopes: principal.scopes, actor: "user_mcp" };
    const facets = await deps.memory.memories.getFacets({}, { identity });
    metrics.mcpCompletions.inc({ outcome: "ok" });
    return completeScopes(facets.scopes, typed);
  } catch (err) {
    metrics.mcpCompletions.inc({ outcome: "failed" });
    deps.log.warn({ error: errorSummary(err) }, "scope completion failed");
    return [];
  }
}

export function registerPrompts(server: McpServer, deps: PromptDeps): void {
  server.registerPrompt(
    "briefing",
    {
      title: "Session briefing",
      description:
        "Start a session oriented: renders an instruction to call the briefing tool with an explicit selector " +
        "(all, scope, project or scope_project) and mode (brief by default, or full), and with since (the last " +
        "briefing's changesCursor) to catch up on only what changed.",
      argsSchema: briefingPromptArgsSchema,
    },
    (args) => userMessage(renderBriefingPrompt(args)),
  );

  // completable() marks the schema object it is given, so each request gets its own copy.
  const scopeArg = completable(debriefScopeArgSchema.describe("Scope the debriefed memories are stored under (kebab-case)."), (typed) =>
    completeDebriefScope(deps, typed),
  );
  server.registerPrompt(
    "debrief",
    {
      title: "Session debrief",
      description:
        "End a session without losing it: renders an instruction to store its decisions, commitments, blockers, " +
        "follow-ups and preferences as separate memories with remember, and to revise or resolve what changed.",
      argsSchema: z.strictObject({ scope: scopeArg.optional() }),
    },
    (args) => userMessage(renderDebriefPrompt(args)),
  );
}
