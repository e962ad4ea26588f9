/**
 * /api/v1/proposals: review_proposals over REST, with the same schemas and service calls.
 *
 *   GET  /api/v1/proposals?status=&limit=    the list action (memory:read)
 *   POST /api/v1/proposals/:id/apply         accept, no body (memory:write)
 *   POST /api/v1/proposals/:id/reject        reject; optional JSON body { rationale } (memory:write)
 *
 * Answers are the tool's output. A malformed id in the path is answered like an unknown one.
 */
import { SCOPES } from "@3ngram/rpc";
import { listProposalsQuerySchema, parseInput, rejectProposalBodySchema, reviewProposalsOutputSchema } from "@3ngram/schema";
import { proposalIdFromPath, reviewProposals } from "../clients/proposals.js";
import { queryOf } from "./openapi.js";
import type { RestRoute } from "./route.js";

export const PROPOSAL_ROUTES: readonly RestRoute[] = [
  {
    method: "get",
    path: "/api/v1/proposals",
    summary: "review_proposals list",
    tag: "proposals",
    scope: SCOPES.read,
    query: queryOf(listProposalsQuerySchema),
    answers: { 200: { description: "the list", json: reviewProposalsOutputSchema } },
    handle: async ({ req, res, memory, identity }) => {
      const query = parseInput(listProposalsQuerySchema, { ...req.query });
      res.json(await reviewProposals({ action: "list", ...query }, { memory, identity }));
    },
  },
  {
    method: "post",
    path: "/api/v1/proposals/:id/apply",
    summary: "accept a proposal",
    tag: "proposals",
    scope: SCOPES.write,
    answers: { 200: { description: "applied or applied_fact", json: reviewProposalsOutputSchema } },
    errors: [404, 409],
    handle: async ({ req, res, memory, identity }) =>
      res.json(await reviewProposals({ action: "accept", proposalId: proposalIdFromPath(req.params.id) }, { memory, identity })),
  },
  {
    method: "post",
    path: "/api/v1/proposals/:id/reject",
    summary: "reject a proposal, optionally saying why",
    tag: "proposals",
    scope: SCOPES.write,
    body: { schema: rejectProposalBodySchema, optional: true },
    answers: { 200: { description: "rejected or rejected_fact", json: reviewProposalsOutputSchema } },
    errors: [404, 409],
    handle: async ({ req, res, memory, identity }) => {
      const body = parseInput(rejectProposalBodySchema, req.body ?? {});
      res.json(await reviewProposals({ action: "reject", proposalId: proposalIdFromPath(req.params.id), ...body }, { memory, identity }));
    },
  },
];
