/**
 * review_proposals over the memory service's proposal RPCs (on the memory peer), shared by the
 * MCP tool, the REST routes and the review UI.
 */
import { AppError } from "@3ngram/errors";
import type { CallerIdentity } from "@3ngram/rpc";
import { proposalIdSchema, type EdgeProposalRecord, type FactProposalRecord, type ReviewProposalsInput, type ReviewProposalsOutput } from "@3ngram/schema";
import type { ActionContext } from "./action-tools.js";
import type { MemoryPeer } from "./memory.js";

type OneProposal = Awaited<ReturnType<MemoryPeer["proposals"]["getProposal"]>>;

/** A proposal id from a URL path, validated like the tool's; a malformed one reads like an unknown one. */
export function proposalIdFromPath(raw: unknown): string {
  const parsed = proposalIdSchema.safeParse(raw);
  if (!parsed.success) throw new AppError("not_found", "proposal not found");
  return parsed.data.toLowerCase();
}

/** Runs one review_proposals action and answers in the tool's output shape. */
export async function reviewProposals(input: ReviewProposalsInput, { memory, ...options }: ActionContext): Promise<ReviewProposalsOutput> {
  const api = memory.proposals;
  switch (input.action) {
    case "list":
      return { action: "list", ...(await api.listProposals({ status: input.status, limit: input.limit }, options)) };
    case "accept":
      return decision("applied", await api.acceptProposal({ proposalId: input.proposalId }, options));
    case "reject":
      return decision("rejected", await api.rejectProposal({ proposalId: input.proposalId, rationale: input.rationale }, options));
  }
}

/** An accept or reject: the edge variants keep their names; a fact proposal answers with the _fact ones. */
function decision(action: "applied" | "rejected", { edge, fact }: OneProposal): ReviewProposalsOutput {
  if (edge) return { action, proposal: edge };
  if (fact) return { action: `${action}_fact`, proposal: fact };
  throw new AppError("internal_error", "memory service returned no proposal");
}

/** One proposal read by id (GetProposal), tagged with its kind. */
export type ProposalRecord = { kind: "edge"; proposal: EdgeProposalRecord } | { kind: "fact"; proposal: FactProposalRecord };

export async function getProposal(memory: MemoryPeer, proposalId: string, options: { identity: CallerIdentity }): Promise<ProposalRecord> {
  const { edge, fact } = await memory.proposals.getProposal({ proposalId }, options);
  if (edge) return { kind: "edge", proposal: edge };
  if (fact) return { kind: "fact", proposal: fact };
  throw new AppError("internal_error", "memory service returned no proposal");
}
