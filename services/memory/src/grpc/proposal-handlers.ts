import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { AppError } from "@3ngram/errors";
import type { EdgeProposalSchema, FactProposalSchema, MemoryService } from "@3ngram/proto/memory/v1";
import { SCOPES, type Handlers, type Policies } from "@3ngram/rpc";
import {
  createEdgeProposalsInputSchema,
  createFactProposalsInputSchema,
  memoryIdSchema,
  acceptProposalInputSchema as acceptInputSchema,
  parseInput,
  rejectProposalInputSchema as rejectInputSchema,
  reviewProposalsInputSchema,
} from "@3ngram/schema";
import type { EdgeProposalRow, FactProposalRow } from "../db/proposals.js";
import type { MemoryDeps } from "../domain/deps.js";
import {
  DEFAULT_EXPIRY_BATCH,
  DEFAULT_PENDING_EMBEDDINGS_PAGE,
  DEFAULT_TENANT_PAGE,
  MAX_EXPIRY_BATCH,
  MAX_PENDING_EMBEDDINGS_PAGE,
  MAX_TENANT_PAGE,
  expireCommitments,
  listPendingEmbeddings,
  listTenants,
} from "../domain/maintenance.js";
import {
  acceptProposal,
  createEdgeProposals,
  createFactProposals,
  getProposal,
  listProposals,
  rejectProposal,
  type DecidedProposal,
} from "../domain/proposals.js";
import { actorOf } from "./mappers.js";

// Proposals (review_proposals and the consolidator's hand-over) and the consolidator's maintenance calls.
type ProposalMethods =
  | "createConsolidationProposals"
  | "createFactProposals"
  | "listProposals"
  | "getProposal"
  | "acceptProposal"
  | "rejectProposal"
  | "listTenants"
  | "listPendingEmbeddings"
  | "expireCommitments";

export function proposalHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, ProposalMethods> {
  return {
    async createConsolidationProposals(request, ctx) {
      const input = parseInput(createEdgeProposalsInputSchema, {
        proposals: request.proposals.map((p) => ({
          fromId: p.fromId,
          toId: p.toId,
          edgeType: p.edgeType,
          similarity: p.similarity,
          ...(p.rationale !== undefined ? { rationale: p.rationale } : {}),
        })),
      });
      return createEdgeProposals(deps, actorOf(ctx), input);
    },

    async createFactProposals(request, ctx) {
      const input = parseInput(createFactProposalsInputSchema, {
        memoryId: request.memoryId,
        extractor: request.extractor,
        facts: request.facts.map((f) => ({
          subject: f.subject,
          predicate: f.predicate,
          value: f.value,
          ...(f.confidence !== undefined ? { confidence: f.confidence } : {}),
          ...(f.rationale !== undefined ? { rationale: f.rationale } : {}),
        })),
      });
      return createFactProposals(deps, actorOf(ctx), input);
    },

    async listProposals(request, ctx) {
      // proto3 cannot say "absent": empty status and limit 0 mean the defaults.
      const input = parseInput(reviewProposalsInputSchema, {
        action: "list",
        ...(request.status !== "" ? { status: request.status } : {}),
        ...(request.limit !== 0 ? { limit: request.limit } : {}),
      });
      if (input.action !== "list") throw new AppError("internal_error", "list input expected");
      const { edges, facts } = await listProposals(deps, actorOf(ctx), input);
      return { proposals: edges.map(toProtoEdgeProposal), factProposals: facts.map(toProtoFactProposal) };
    },

    async getProposal(request, ctx) {
      // Same id rule as accept: a malformed id is the caller's mistake, named by its field.
      const input = parseInput(acceptInputSchema, { action: "accept", proposalId: request.proposalId });
      return toDecideResponse(await getProposal(deps, actorOf(ctx), input.proposalId));
    },

    async acceptProposal(request, ctx) {
      const input = parseInput(acceptInputSchema, { action: "accept", proposalId: request.proposalId });
      return toDecideResponse(await acceptProposal(deps, actorOf(ctx), input.proposalId));
    },

    async rejectProposal(request, ctx) {
      const input = parseInput(rejectInputSchema, {
        action: "reject",
        proposalId: request.proposalId,
        ...(request.rationale !== undefined ? { rationale: request.rationale } : {}),
      });
      return toDecideResponse(await rejectProposal(deps, actorOf(ctx), input));
    },

    async listTenants(request) {
      const tenantIds = await listTenants(deps, {
        after: request.after === "" ? null : parseInput(memoryIdSchema, request.after),
        limit: pageLimit(request.limit, DEFAULT_TENANT_PAGE, MAX_TENANT_PAGE),
      });
      return { tenantIds };
    },

    async listPendingEmbeddings(request, ctx) {
      if (!/^[\w.:/-]{1,128}$/.test(request.model)) throw new AppError("invalid_input", "model: must be a model id", { field: "model" });
      const memoryIds = await listPendingEmbeddings(deps, actorOf(ctx), {
        model: request.model,
        after: request.after === "" ? null : parseInput(memoryIdSchema, request.after),
        limit: pageLimit(request.limit, DEFAULT_PENDING_EMBEDDINGS_PAGE, MAX_PENDING_EMBEDDINGS_PAGE),
      });
      return { memoryIds };
    },

    async expireCommitments(request, ctx) {
      if (!request.dueBefore) throw new AppError("invalid_input", "due_before: required", { field: "due_before" });
      const result = await expireCommitments(deps, actorOf(ctx), {
        dueBefore: timestampDate(request.dueBefore),
        limit: pageLimit(request.limit, DEFAULT_EXPIRY_BATCH, MAX_EXPIRY_BATCH),
      });
      return { memoryIds: result.expired, skipped: result.skipped };
    },
  };
}

export const proposalPolicies: Pick<Policies<typeof MemoryService>, ProposalMethods> = {
  createConsolidationProposals: { anyScope: [SCOPES.internalConsolidate], tenant: true },
  createFactProposals: { anyScope: [SCOPES.internalConsolidate], tenant: true },
  listProposals: { anyScope: [SCOPES.read], tenant: true },
  getProposal: { anyScope: [SCOPES.read], tenant: true },
  acceptProposal: { anyScope: [SCOPES.write], tenant: true },
  rejectProposal: { anyScope: [SCOPES.write], tenant: true },
  listTenants: { anyScope: [SCOPES.internalConsolidate], tenant: false },
  listPendingEmbeddings: { anyScope: [SCOPES.internalEmbed], tenant: true },
  expireCommitments: { anyScope: [SCOPES.internalConsolidate], tenant: true },
};

function pageLimit(requested: number, fallback: number, max: number): number {
  if (requested === 0) return fallback;
  if (requested > max) throw new AppError("invalid_input", `limit: at most ${max}`, { field: "limit" });
  return requested;
}

function toDecideResponse(decided: DecidedProposal) {
  return decided.kind === "edge" ? { edge: toProtoEdgeProposal(decided.edge) } : { fact: toProtoFactProposal(decided.fact) };
}

function toProtoEdgeProposal(row: EdgeProposalRow): MessageInitShape<typeof EdgeProposalSchema> {
  return {
    id: row.id,
    fromId: row.fromId,
    toId: row.toId,
    edgeType: row.edgeType,
    memoryType: row.memoryType,
    fromTopic: row.fromTopic,
    toTopic: row.toTopic,
    similarity: row.similarity,
    ...(row.rationale !== null ? { rationale: row.rationale } : {}),
    status: row.status,
    ...(row.decidedAt ? { decidedAt: timestampFromDate(row.decidedAt) } : {}),
    ...(row.decisionRationale !== null ? { decisionRationale: row.decisionRationale } : {}),
    createdAt: timestampFromDate(row.createdAt),
  };
}

function toProtoFactProposal(row: FactProposalRow): MessageInitShape<typeof FactProposalSchema> {
  return {
    id: row.id,
    memoryId: row.memoryId,
    subject: row.subject,
    predicate: row.predicate,
    value: row.value,
    ...(row.confidence !== null ? { confidence: row.confidence } : {}),
    extractor: row.extractor,
    ...(row.rationale !== null ? { rationale: row.rationale } : {}),
    status: row.status,
    ...(row.decidedAt ? { decidedAt: timestampFromDate(row.decidedAt) } : {}),
    ...(row.decisionRationale !== null ? { decisionRationale: row.decisionRationale } : {}),
    ...(row.factId !== null ? { factId: row.factId } : {}),
    createdAt: timestampFromDate(row.createdAt),
  };
}
