import { MemoryService } from "@3ngram/proto/memory/v1";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { memoryContract } from "@3ngram/schema";
import type { MemoryDeps } from "../domain/deps.js";
import { expireCommitments, listPendingEmbeddings, listTenants } from "../domain/maintenance.js";
import * as proposals from "../domain/proposals.js";
import { actorOf } from "./mappers.js";

// Proposals (review_proposals and the consolidator's hand-over) and the consolidator's maintenance calls.

export function proposalHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, keyof typeof proposalPolicies> {
  return bridgeHandlers(MemoryService, memoryContract, {
    createConsolidationProposals: async (input, ctx) => proposals.createEdgeProposals(deps, actorOf(ctx), input),
    createFactProposals: async (input, ctx) => proposals.createFactProposals(deps, actorOf(ctx), input),
    async listProposals(input, ctx) {
      const { edges, facts } = await proposals.listProposals(deps, actorOf(ctx), input);
      return { proposals: edges, count: edges.length, factProposals: facts };
    },
    getProposal: async ({ proposalId }, ctx) => decided(await proposals.getProposal(deps, actorOf(ctx), proposalId)),
    acceptProposal: async ({ proposalId }, ctx) => decided(await proposals.acceptProposal(deps, actorOf(ctx), proposalId)),
    rejectProposal: async (input, ctx) => decided(await proposals.rejectProposal(deps, actorOf(ctx), input)),
    listTenants: async (input) => ({ tenantIds: await listTenants(deps, input) }),
    listPendingEmbeddings: async (input, ctx) => ({ memoryIds: await listPendingEmbeddings(deps, actorOf(ctx), input) }),
    async expireCommitments(input, ctx) {
      const result = await expireCommitments(deps, actorOf(ctx), { dueBefore: new Date(input.dueBefore), limit: input.limit });
      return { memoryIds: result.expired, skipped: result.skipped };
    },
  });
}

export const proposalPolicies = {
  createConsolidationProposals: { anyScope: [SCOPES.internalConsolidate], tenant: true },
  createFactProposals: { anyScope: [SCOPES.internalConsolidate], tenant: true },
  listProposals: { anyScope: [SCOPES.read], tenant: true },
  getProposal: { anyScope: [SCOPES.read], tenant: true },
  acceptProposal: { anyScope: [SCOPES.write], tenant: true },
  rejectProposal: { anyScope: [SCOPES.write], tenant: true },
  listTenants: { anyScope: [SCOPES.internalConsolidate], tenant: false },
  listPendingEmbeddings: { anyScope: [SCOPES.internalEmbed], tenant: true },
  expireCommitments: { anyScope: [SCOPES.internalConsolidate], tenant: true },
} satisfies Partial<Policies<typeof MemoryService>>;

/** A proposal by its kind. */
function decided(proposal: proposals.DecidedProposal) {
  return proposal.kind === "edge" ? { edge: proposal.edge } : { fact: proposal.fact };
}
