import { ProposalsService } from "@3ngram/proto/memory/v1";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { memoryContracts } from "@3ngram/schema";
import type { MemoryDeps } from "../domain/deps.js";
import * as proposals from "../domain/proposals.js";
import { actorOf } from "./actor.js";

// ProposalsService: review_proposals, and the consolidator's hand-over of what it proposes.

export function proposalHandlers(deps: MemoryDeps): Handlers<typeof ProposalsService> {
  return bridgeHandlers(ProposalsService, memoryContracts.proposals, {
    createConsolidationProposals: async (input, ctx) => proposals.createEdgeProposals(deps, actorOf(ctx), input),
    createFactProposals: async (input, ctx) => proposals.createFactProposals(deps, actorOf(ctx), input),
    async listProposals(input, ctx) {
      const { edges, facts } = await proposals.listProposals(deps, actorOf(ctx), input);
      return { proposals: edges, count: edges.length, factProposals: facts };
    },
    getProposal: async ({ proposalId }, ctx) => decided(await proposals.getProposal(deps, actorOf(ctx), proposalId)),
    acceptProposal: async ({ proposalId }, ctx) => decided(await proposals.acceptProposal(deps, actorOf(ctx), proposalId)),
    rejectProposal: async (input, ctx) => decided(await proposals.rejectProposal(deps, actorOf(ctx), input)),
  });
}

export const proposalPolicies = {
  createConsolidationProposals: { anyScope: [SCOPES.internalConsolidate], tenant: true },
  createFactProposals: { anyScope: [SCOPES.internalConsolidate], tenant: true },
  listProposals: { anyScope: [SCOPES.read], tenant: true },
  getProposal: { anyScope: [SCOPES.read], tenant: true },
  acceptProposal: { anyScope: [SCOPES.write], tenant: true },
  rejectProposal: { anyScope: [SCOPES.write], tenant: true },
} satisfies Policies<typeof ProposalsService>;

/** A proposal by its kind. */
function decided(proposal: proposals.DecidedProposal) {
  return proposal.kind === "edge" ? { edge: proposal.edge } : { fact: proposal.fact };
}
