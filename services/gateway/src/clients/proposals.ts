/**
 * review_proposals ↔ the memory service's proposal RPCs: the one mapping between their proto
 * messages and the public shapes, shared by the MCP tool and the REST routes.
 */
import { AppError } from "@3ngram/errors";
import type {
  AcceptProposalResponse,
  EdgeProposal,
  FactProposal,
  GetProposalResponse,
  ListProposalsResponse,
  RejectProposalResponse,
} from "@3ngram/proto/memory/v1";
import { SCOPES, type CallerIdentity, type Scope } from "@3ngram/rpc";
import {
  edgeProposalRecordSchema,
  factProposalRecordSchema,
  proposalIdSchema,
  reviewProposalsOutputSchema,
  type EdgeProposalRecord,
  type FactProposalRecord,
  type ReviewProposalsInput,
  type ReviewProposalsOutput,
} from "@3ngram/schema";
import type { MemoryClient } from "./memory.js";

/** A proposal id from a URL path, validated like the tool's; a malformed one reads like an unknown one. */
export function proposalIdFromPath(raw: unknown): string {
  const parsed = proposalIdSchema.safeParse(raw);
  if (!parsed.success) throw new AppError("not_found", "proposal not found");
  return parsed.data.toLowerCase();
}
import { isoTime, isoTimeOrNull } from "./timestamps.js";

/** list reads; accept and reject write. */
export function reviewProposalsAccess(input: ReviewProposalsInput): Scope {
  return input.action === "list" ? SCOPES.read : SCOPES.write;
}

/** Runs one review_proposals action and answers in the tool's output shape. */
export async function reviewProposals(
  memory: MemoryClient,
  input: ReviewProposalsInput,
  options: { identity: CallerIdentity },
): Promise<ReviewProposalsOutput> {
  switch (input.action) {
    case "list":
      return toListOutput(await memory.listProposals({ status: input.status, limit: input.limit }, options));
    case "accept":
      return toDecisionOutput(await memory.acceptProposal({ proposalId: input.proposalId }, options), "applied");
    case "reject":
      return toDecisionOutput(
        await memory.rejectProposal({ proposalId: input.proposalId, ...(input.rationale !== undefined ? { rationale: input.rationale } : {}) }, options),
        "rejected",
      );
  }
}

/** The list: edge proposals and their count always; factProposals only when there are some. */
function toListOutput(response: ListProposalsResponse): ReviewProposalsOutput {
  const proposals = response.proposals.map(toEdgeProposalRecord);
  const factProposals = response.factProposals.map(toFactProposalRecord);
  return reviewProposalsOutputSchema.parse({
    action: "list",
    proposals,
    count: proposals.length,
    ...(factProposals.length > 0 ? { factProposals } : {}),
  });
}

/** An accept or reject: the edge variants keep their names; a fact proposal answers with the _fact ones. */
function toDecisionOutput(response: AcceptProposalResponse | RejectProposalResponse, decision: "applied" | "rejected"): ReviewProposalsOutput {
  if (response.edge) return reviewProposalsOutputSchema.parse({ action: decision, proposal: toEdgeProposalRecord(response.edge) });
  if (response.fact) return reviewProposalsOutputSchema.parse({ action: `${decision}_fact`, proposal: toFactProposalRecord(response.fact) });
  throw new AppError("internal_error", "memory service returned no proposal");
}

/** One proposal read by id (GetProposal), tagged with its kind. */
export type ProposalRecord = { kind: "edge"; proposal: EdgeProposalRecord } | { kind: "fact"; proposal: FactProposalRecord };

export function toProposalRecord(response: GetProposalResponse): ProposalRecord {
  if (response.edge) return { kind: "edge", proposal: toEdgeProposalRecord(response.edge) };
  if (response.fact) return { kind: "fact", proposal: toFactProposalRecord(response.fact) };
  throw new AppError("internal_error", "memory service returned no proposal");
}

function toEdgeProposalRecord(p: EdgeProposal): EdgeProposalRecord {
  return edgeProposalRecordSchema.parse({
    id: p.id,
    fromId: p.fromId,
    toId: p.toId,
    edgeType: p.edgeType,
    memoryType: p.memoryType,
    fromTopic: p.fromTopic,
    toTopic: p.toTopic,
    similarity: p.similarity,
    rationale: p.rationale ?? null,
    status: p.status,
    decidedAt: isoTimeOrNull(p.decidedAt),
    decisionRationale: p.decisionRationale ?? null,
    createdAt: isoTime(p.createdAt, "created_at"),
  });
}

function toFactProposalRecord(p: FactProposal): FactProposalRecord {
  return factProposalRecordSchema.parse({
    id: p.id,
    memoryId: p.memoryId,
    subject: p.subject,
    predicate: p.predicate,
    value: p.value,
    confidence: p.confidence ?? null,
    extractor: p.extractor,
    rationale: p.rationale ?? null,
    status: p.status,
    decidedAt: isoTimeOrNull(p.decidedAt),
    decisionRationale: p.decisionRationale ?? null,
    factId: p.factId ?? null,
    createdAt: isoTime(p.createdAt, "created_at"),
  });
}
