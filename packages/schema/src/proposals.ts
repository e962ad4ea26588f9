/**
 * Proposals: what background work suggests and a person accepts or rejects. Two kinds share one id
 * space — consolidation (edge) proposals and extracted-fact proposals — so review_proposals takes an
 * id alone. Nothing proposed is queryable truth until it is accepted.
 */
import { z } from "zod";
import { memoryIdSchema, memoryTypeSchema } from "./memory.js";
import { outputObject } from "./open-object.js";
import { perActionInput } from "./per-action.js";
import { storableText } from "./storable-text.js";

export const DEFAULT_PROPOSALS_LIMIT = 25;
export const MAX_PROPOSALS_LIMIT = 100;
/** A reviewer's reason, or the consolidator's rationale. */
const MAX_PROPOSAL_RATIONALE_LENGTH = 2000;
/** Most edge proposals the consolidator hands over in one call (one tenant's scan). */
const MAX_EDGE_PROPOSALS_PER_CALL = 200;
/** Most fact proposals one memory can yield in one extraction. */
export const MAX_FACT_PROPOSALS_PER_MEMORY = 50;

const proposalStatusSchema = z.enum(["proposed", "applied", "rejected"]);
export type ProposalStatus = z.infer<typeof proposalStatusSchema>;

/** Edge kinds a consolidation proposal may carry (derives is never proposed). */
const proposedEdgeTypeSchema = z.enum(["extends", "updates", "supersedes"]);
export type ProposedEdgeType = z.infer<typeof proposedEdgeTypeSchema>;

const rationaleSchema = storableText().trim().min(1).max(MAX_PROPOSAL_RATIONALE_LENGTH);
export const proposalIdSchema = z.uuid({ message: "must be a proposal id (UUID)" });

/** review_proposals accept: one proposal by id (either kind; the id says which). */
export const acceptProposalInputSchema = z.strictObject({ action: z.literal("accept"), proposalId: proposalIdSchema });
/** review_proposals reject: one proposal by id, optionally with the reviewer's reason (stored with the decision). */
export const rejectProposalInputSchema = z.strictObject({ action: z.literal("reject"), proposalId: proposalIdSchema, rationale: rationaleSchema.optional() });

/**
 * review_proposals: list the queue (both kinds; status defaults to proposed), or accept / reject
 * one proposal by id. Advertised as one flat object (see perActionInput).
 */
export const listProposalsFields = {
  status: proposalStatusSchema.default("proposed"),
  limit: z.int().min(1).max(MAX_PROPOSALS_LIMIT).default(DEFAULT_PROPOSALS_LIMIT),
};
export const reviewProposalsInputSchema = perActionInput("action", [
  z.strictObject({ action: z.literal("list"), ...listProposalsFields }),
  acceptProposalInputSchema,
  rejectProposalInputSchema,
]);
export type ReviewProposalsInput = z.infer<typeof reviewProposalsInputSchema>;

/** GET /api/v1/proposals: the list action as a query string. */
export const listProposalsQuerySchema = z.strictObject({
  status: proposalStatusSchema.default("proposed"),
  limit: z.coerce.number().int().min(1).max(MAX_PROPOSALS_LIMIT).default(DEFAULT_PROPOSALS_LIMIT),
});

/** POST /api/v1/proposals/:id/reject: an optional body. */
export const rejectProposalBodySchema = z.strictObject({ rationale: rationaleSchema.optional() });

/** A consolidation proposal: link `fromId` (the newer memory) to `toId` (the older one) with `edgeType`. */
export const edgeProposalRecordSchema = outputObject({
  id: z.string(),
  fromId: z.string(),
  toId: z.string(),
  edgeType: proposedEdgeTypeSchema,
  /** The successor's type. */
  memoryType: memoryTypeSchema,
  /** Topics of both ends, so a reviewer can judge without another call (full text: get_memories). */
  fromTopic: z.string(),
  toTopic: z.string(),
  similarity: z.number(),
  rationale: z.string().nullable(),
  status: proposalStatusSchema,
  decidedAt: z.string().nullable(),
  decisionRationale: z.string().nullable(),
  createdAt: z.string(),
});
export type EdgeProposalRecord = z.infer<typeof edgeProposalRecordSchema>;

/** A fact extracted from a memory; accepting it writes the fact so get_facts returns it. */
export const factProposalRecordSchema = outputObject({
  id: z.string(),
  memoryId: z.string(),
  subject: z.string(),
  predicate: z.string(),
  value: z.string(),
  confidence: z.number().nullable(),
  /** Which extractor proposed it ("rules/1", "llm/<model>"). */
  extractor: z.string(),
  rationale: z.string().nullable(),
  status: proposalStatusSchema,
  decidedAt: z.string().nullable(),
  decisionRationale: z.string().nullable(),
  /** The fact written on accept. */
  factId: z.string().nullable(),
  createdAt: z.string(),
});
export type FactProposalRecord = z.infer<typeof factProposalRecordSchema>;

/**
 * One object shape for every action (MCP output schemas are objects). `list` answers `proposals`
 * (edge proposals) and `count` (= proposals.length), plus `factProposals` only when there are
 * some, so a client written for edge proposals alone sees exactly what it always saw. accept and
 * reject answer `applied` / `rejected` with an edge proposal, `applied_fact` / `rejected_fact`
 * with a fact proposal.
 */
export const reviewProposalsOutputSchema = outputObject({
  action: z.enum(["list", "applied", "rejected", "applied_fact", "rejected_fact"]),
  proposals: z.array(edgeProposalRecordSchema).optional(),
  count: z.int().min(0).optional(),
  factProposals: z.array(factProposalRecordSchema).optional(),
  proposal: z.union([edgeProposalRecordSchema, factProposalRecordSchema]).optional(),
});
export type ReviewProposalsOutput = z.infer<typeof reviewProposalsOutputSchema>;

/** What the consolidator proposes for one pair (CreateConsolidationProposals). */
const newEdgeProposalSchema = z.strictObject({
  fromId: memoryIdSchema,
  toId: memoryIdSchema,
  edgeType: proposedEdgeTypeSchema,
  similarity: z.number().min(-1).max(1),
  rationale: rationaleSchema.optional(),
});
export type NewEdgeProposal = z.infer<typeof newEdgeProposalSchema>;

/** What an extractor proposes from one memory (CreateFactProposals). Unit in the predicate, one measure per fact. */
const newFactProposalSchema = z.strictObject({
  subject: storableText().trim().min(1).max(256),
  predicate: storableText().trim().min(1).max(256),
  value: storableText().trim().min(1).max(2000),
  confidence: z.number().min(0).max(1).optional(),
  rationale: rationaleSchema.optional(),
});
export type NewFactProposal = z.infer<typeof newFactProposalSchema>;

export const createEdgeProposalsInputSchema = z.strictObject({
  proposals: z.array(newEdgeProposalSchema).max(MAX_EDGE_PROPOSALS_PER_CALL),
});
export type CreateEdgeProposalsInput = z.infer<typeof createEdgeProposalsInputSchema>;

export const createFactProposalsInputSchema = z.strictObject({
  memoryId: memoryIdSchema,
  extractor: storableText().trim().min(1).max(128),
  facts: z.array(newFactProposalSchema).max(MAX_FACT_PROPOSALS_PER_MEMORY),
});
export type CreateFactProposalsInput = z.infer<typeof createFactProposalsInputSchema>;
