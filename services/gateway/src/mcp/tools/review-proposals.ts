import { DEFAULT_PROPOSALS_LIMIT, MAX_PROPOSALS_LIMIT, reviewProposalsInputSchema, reviewProposalsOutputSchema } from "@3ngram/schema";
import { actionAccess } from "../../clients/action-tools.js";
import { reviewProposals } from "../../clients/proposals.js";
import { TOOL_ANNOTATIONS } from "../annotations.js";
import { defineTool } from "../tool.js";

export const reviewProposalsTool = defineTool({
  name: "review_proposals",
  title: "Review proposals",
  description:
    "Review what background work suggests, and accept or reject it: links between similar memories (consolidation: " +
    "extends, updates or supersedes) and facts extracted from memory text. Nothing suggested counts until a person " +
    "accepts it. One action per call: list {status?: proposed (default) | applied | rejected, limit? " +
    `1-${MAX_PROPOSALS_LIMIT}, default ${DEFAULT_PROPOSALS_LIMIT}} answers proposals, newest first, with count, and ` +
    "factProposals when there are any; accept {proposalId} creates the link (supersedes/updates close the older " +
    "memory as revise does) or writes the fact for get_facts, answering applied or applied_fact; reject {proposalId, " +
    "rationale?} answers rejected or rejected_fact, and the same suggestion is never made again. list needs " +
    "memory:read; accept and reject memory:write.",
  inputSchema: reviewProposalsInputSchema,
  outputSchema: reviewProposalsOutputSchema,
  requiredScope: actionAccess,
  annotations: TOOL_ANNOTATIONS.review_proposals,
  run: reviewProposals,
});
