import { SCOPES } from "@3ngram/rpc";
import {
  DEFAULT_BRIEFING_TOP,
  MAX_BRIEFING_SECTION,
  MAX_BRIEFING_SECTION_CEILING,
  STALE_WINDOW_DAYS,
  briefingInputSchema,
  briefingOutputSchema,
} from "@3ngram/schema";
import { TOOL_ANNOTATIONS } from "../annotations.js";
import { defineTool } from "../tool.js";

export const briefingTool = defineTool({
  name: "briefing",
  title: "Session briefing",
  description:
    "Get oriented before working: an overview of what needs attention now. Call it at the start of a session, or when " +
    "switching to another scope or project, to catch up on commitments (open or waiting, most pressing first), overdue " +
    "ones, blockers, recent decisions and preferences, plus staleCandidates: decisions, preferences, blockers and facts " +
    `untouched for ${STALE_WINDOW_DAYS} days, worth re-checking. selector is required: {kind: "all"}, {kind: "scope", scope}, ` +
    '{kind: "project", project} (memories without a project never match) or {kind: "scope_project", scope, project, ' +
    `includeUnscoped?}. mode brief (default, ${DEFAULT_BRIEFING_TOP} per section) or full (${MAX_BRIEFING_SECTION}); ` +
    `sectionLimit (1-${MAX_BRIEFING_SECTION_CEILING}) overrides both; sections picks a subset. Each section has an exact ` +
    "count and hasMore. Items are topics and metadata only: read one in full with get_memories, or recall more with search. " +
    "To catch up next time, pass back its changesCursor as since (same selector) for only what changed in between.",
  inputSchema: briefingInputSchema,
  outputSchema: briefingOutputSchema,
  requiredScope: SCOPES.read,
  annotations: TOOL_ANNOTATIONS.briefing,
  async run(input, { memory, identity }) {
    return memory.orientation.briefing(input, { identity });
  },
});
