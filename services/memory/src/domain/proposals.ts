/**
 * Proposals: the human-in-the-loop side of background work. The consolidator hands over edge
 * proposals (two similar live memories that should be linked) and fact proposals (claims an
 * extractor read in a memory); a person lists them and accepts or rejects each. Accepting an edge
 * proposal materialises the edge — for supersedes/updates exactly as revise does it: the
 * predecessor's valid time closes and its commitment carries over — and accepting a fact proposal
 * asserts the fact, so get_facts returns it. Nothing proposed is queryable truth before that.
 */
import { uuidv7 } from "uuidv7";
import { AppError } from "@3ngram/errors";
import { withTenant, type PoolClient } from "@3ngram/db";
import { type CommitmentStatus, type CreateEdgeProposalsInput, type CreateFactProposalsInput, type ProposalStatus } from "@3ngram/schema";
import { applyCarriedState, freezeCommitment, lockCommitmentOfMemory, updateCommitmentStatus, type CommitmentState } from "../db/commitments.js";
import { insertEdge } from "../db/edges.js";
import { assertFact } from "../db/facts.js";
import { closeMemory, lockMemory, type MemoryState } from "../db/lifecycle.js";
import { insertEvent } from "../db/memories.js";
import {
  decideEdgeProposal,
  decideFactProposal,
  edgeExists,
  insertEdgeProposals,
  insertFactProposals,
  selectEdgeProposal,
  selectEdgeProposals,
  selectFactProposal,
  selectFactProposals,
  selectOpenFact,
  selectProposalKind,
  selectValidFrom,
  type EdgeProposalRow,
  type FactProposalRow,
} from "../db/proposals.js";
import type { Actor, MemoryDeps } from "./deps.js";
import { memoryNotFound, notLive } from "./lifecycle-guard.js";
import { commitmentEventKind } from "./resolve.js";

export type DecidedProposal = { kind: "edge"; edge: EdgeProposalRow } | { kind: "fact"; fact: FactProposalRow };

export interface CreatedProposals {
  createdIds: string[];
  skipped: number;
}

/**
 * Stores the consolidator's edge proposals for one tenant. Pairs whose ends are no longer both
 * live, that an edge already links, or that were proposed before (open or decided, in either
 * orientation) are skipped, so re-running a scan proposes nothing twice.
 */
export async function createEdgeProposals(deps: MemoryDeps, actor: Actor, input: CreateEdgeProposalsInput): Promise<CreatedProposals> {
  const rows = input.proposals.map((p) => ({ ...p, id: uuidv7(), fromId: p.fromId.toLowerCase(), toId: p.toId.toLowerCase() }));
  const createdIds = await withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId }, (db) => insertEdgeProposals(db, actor.tenantId, rows));
  const result = { createdIds, skipped: rows.length - createdIds.length };
  deps.log.info({ offered: rows.length, created: createdIds.length, skipped: result.skipped }, "edge proposals stored");
  return result;
}

/**
 * Stores the facts an extractor read in one memory as proposals. A claim already proposed for the
 * memory (whatever became of it) or already one of its facts is skipped; an unknown (or another
 * tenant's) memory is not_found.
 */
export async function createFactProposals(deps: MemoryDeps, actor: Actor, input: CreateFactProposalsInput): Promise<CreatedProposals> {
  const memoryId = input.memoryId.toLowerCase();
  const rows = input.facts.map((f) => ({ ...f, id: uuidv7() }));
  const createdIds = await withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId }, async (db) => {
    if ((await selectValidFrom(db, actor.tenantId, memoryId)) === null) throw memoryNotFound(memoryId);
    return insertFactProposals(db, actor.tenantId, memoryId, input.extractor, rows);
  });
  const result = { createdIds, skipped: rows.length - createdIds.length };
  deps.log.info({ memoryId, offered: rows.length, created: createdIds.length, skipped: result.skipped }, "fact proposals stored");
  return result;
}

/** Both kinds with one status, newest first, at most `limit` of each. */
export async function listProposals(
  deps: MemoryDeps,
  actor: Actor,
  input: { status: ProposalStatus; limit: number },
): Promise<{ edges: EdgeProposalRow[]; facts: FactProposalRow[] }> {
  return withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId, readOnly: true }, async (db) => ({
    edges: await selectEdgeProposals(db, actor.tenantId, input.status, input.limit),
    facts: await selectFactProposals(db, actor.tenantId, input.status, input.limit),
  }));
}

/** One proposal of either kind, whatever its status; another tenant's id reads as not_found. */
export async function getProposal(deps: MemoryDeps, actor: Actor, proposalId: string): Promise<DecidedProposal> {
  const id = proposalId.toLowerCase();
  return withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId, readOnly: true }, async (db): Promise<DecidedProposal> => {
    const kind = await kindOf(db, actor.tenantId, id);
    if (kind === "edge") return { kind, edge: assertFound(id, await selectEdgeProposal(db, actor.tenantId, id, { lock: false })) };
    return { kind, fact: assertFound(id, await selectFactProposal(db, actor.tenantId, id, { lock: false })) };
  });
}

/**
 * Accepts an open proposal, in one transaction. An edge proposal whose ends are no longer both
 * live is refused with conflict (naming the current head when one was superseded) and stays open;
 * so is a fact proposal whose value would land before the value already current.
 */
export async function acceptProposal(deps: MemoryDeps, actor: Actor, proposalId: string): Promise<DecidedProposal> {
  const id = proposalId.toLowerCase();
  const decided = await withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId }, async (db): Promise<DecidedProposal> => {
    const kind = await kindOf(db, actor.tenantId, id);
    if (kind === "edge") {
      await applyEdge(db, actor, id);
      return { kind, edge: (await selectEdgeProposal(db, actor.tenantId, id, { lock: false }))! };
    }
    await applyFact(db, actor, id);
    return { kind, fact: (await selectFactProposal(db, actor.tenantId, id, { lock: false }))! };
  });
  deps.log.info({ proposalId: id, kind: decided.kind }, "proposal applied");
  return decided;
}

/** Rejects an open proposal, keeping it (and the reviewer's reason) for the record. The pair or claim is never proposed again. */
export async function rejectProposal(deps: MemoryDeps, actor: Actor, input: { proposalId: string; rationale?: string | undefined }): Promise<DecidedProposal> {
  const id = input.proposalId.toLowerCase();
  const decision = { status: "rejected" as const, decidedBy: actor.userId ?? null, rationale: input.rationale ?? null };
  const decided = await withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId }, async (db): Promise<DecidedProposal> => {
    const kind = await kindOf(db, actor.tenantId, id);
    if (kind === "edge") {
      assertOpen(id, await selectEdgeProposal(db, actor.tenantId, id, { lock: true }));
      await decideEdgeProposal(db, actor.tenantId, id, decision);
      return { kind, edge: (await selectEdgeProposal(db, actor.tenantId, id, { lock: false }))! };
    }
    assertOpen(id, await selectFactProposal(db, actor.tenantId, id, { lock: true }));
    await decideFactProposal(db, actor.tenantId, id, { ...decision, factId: null });
    return { kind, fact: (await selectFactProposal(db, actor.tenantId, id, { lock: false }))! };
  });
  deps.log.info({ proposalId: id, kind: decided.kind, withRationale: input.rationale !== undefined }, "proposal rejected");
  return decided;
}

async function kindOf(db: PoolClient, tenantId: string, id: string): Promise<"edge" | "fact"> {
  const kind = await selectProposalKind(db, tenantId, id);
  // Another tenant's id reads exactly like an unknown one: RLS and the tenant predicate hide it.
  if (kind === null) throw new AppError("not_found", `proposal ${id} not found`);
  return kind;
}

function assertFound<T>(id: string, row: T | null): T {
  if (row === null) throw new AppError("not_found", `proposal ${id} not found`);
  return row;
}

function assertOpen<T extends { status: ProposalStatus }>(id: string, row: T | null): T {
  if (row === null) throw new AppError("not_found", `proposal ${id} not found`);
  if (row.status !== "proposed") throw new AppError("conflict", `proposal ${id} is already ${row.status}`, { ids: { proposal: id } });
  return row;
}

/** Materialises an open edge proposal and marks it applied. */
async function applyEdge(db: PoolClient, actor: Actor, id: string): Promise<void> {
  const tenantId = actor.tenantId;
  const proposal = assertOpen(id, await selectEdgeProposal(db, tenantId, id, { lock: true }));
  // Both ends locked in id order, so two accepts sharing a memory cannot deadlock; revise and
  // resolve take the same row locks, so they serialise with this.
  const states = new Map<string, MemoryState>();
  for (const memoryId of [proposal.fromId, proposal.toId].sort()) {
    const state = await lockMemory(db, tenantId, memoryId);
    if (state === null) throw memoryNotFound(memoryId);
    states.set(memoryId, state);
  }
  const successor = states.get(proposal.fromId)!;
  const predecessor = states.get(proposal.toId)!;
  for (const state of [successor, predecessor]) {
    const blocked = await notLive(db, tenantId, state);
    if (blocked) throw blocked;
  }
  const lineage = proposal.edgeType !== "extends";
  if (lineage && (successor.memoryType === "event" || predecessor.memoryType === "event")) {
    // An event records what happened; nothing replaces it.
    throw new AppError("conflict", `proposal ${id}: an event cannot be superseded or updated`, { ids: { proposal: id } });
  }

  if (!(await edgeExists(db, tenantId, successor.id, predecessor.id, proposal.edgeType))) {
    if (lineage) {
      const commitment = await lockCommitmentOfMemory(db, tenantId, predecessor.id);
      // As revise does: the predecessor stopped holding where the successor began (known from now on).
      await closeMemory(db, tenantId, predecessor.id, successor.validFrom);
      await insertEdge(db, {
        id: uuidv7(),
        tenantId,
        fromId: successor.id,
        toId: predecessor.id,
        edgeType: proposal.edgeType,
        createdBy: actor.userId ?? null,
        actor: actor.kind,
        proposalId: id,
      });
      const carry = await carryOnAccept(db, tenantId, successor, commitment);
      await insertEvent(db, {
        id: uuidv7(),
        tenantId,
        memoryId: predecessor.id,
        kind: "supersede",
        actor: actor.kind,
        payload: { successorId: successor.id, edgeType: proposal.edgeType, proposalId: id, ...(carry.carriedTo ? { carriedToMemoryId: carry.carriedTo } : {}) },
      });
      if (carry.moved) {
        // The successor's own commitment changed state: recorded on it, as resolve would, so a
        // changes-since read reports it.
        await insertEvent(db, {
          id: uuidv7(),
          tenantId,
          memoryId: successor.id,
          kind: commitmentEventKind(carry.moved.to),
          actor: actor.kind,
          payload: { commitmentId: carry.moved.commitmentId, from: carry.moved.from, to: carry.moved.to, carriedFromMemoryId: predecessor.id, proposalId: id },
        });
      }
      if (carry.resolved) {
        await insertEvent(db, {
          id: uuidv7(),
          tenantId,
          memoryId: predecessor.id,
          kind: "resolve",
          actor: actor.kind,
          payload: { commitmentId: carry.resolved.commitmentId, from: carry.resolved.from, to: "resolved", successorId: successor.id, proposalId: id },
        });
      }
    } else {
      await insertEdge(db, {
        id: uuidv7(),
        tenantId,
        fromId: successor.id,
        toId: predecessor.id,
        edgeType: "extends",
        createdBy: actor.userId ?? null,
        actor: actor.kind,
        proposalId: id,
      });
    }
  }
  await decideEdgeProposal(db, tenantId, id, { status: "applied", decidedBy: actor.userId ?? null, rationale: null });
}

/**
 * Commitment carry-over when an accepted proposal supersedes (or updates) a commitment's memory.
 * Unlike revise, the successor already exists and may have a commitment of its own:
 * - successor's commitment still untouched (open): it takes the predecessor's state (status,
 *   owner, due date, next surfacing, resolved time), keeping its own owner and due date when set;
 * - successor's commitment already moved: it keeps its state;
 * - successor is not a commitment: a live predecessor commitment is resolved.
 * Either way the predecessor's row stays as the record of what it was and never surfaces again.
 */
async function carryOnAccept(
  db: PoolClient,
  tenantId: string,
  successor: MemoryState,
  predecessorCommitment: CommitmentState | null,
): Promise<{
  carriedTo?: string;
  /** The successor's commitment left `open` for the predecessor's state. */
  moved?: { commitmentId: string; from: CommitmentStatus; to: CommitmentStatus };
  resolved?: { commitmentId: string; from: CommitmentStatus };
}> {
  if (predecessorCommitment === null) return {};
  const own = successor.memoryType === "commitment" ? await lockCommitmentOfMemory(db, tenantId, successor.id) : null;
  if (own !== null) {
    if (own.status === "open") {
      await applyCarriedState(db, tenantId, successor.id, {
        status: predecessorCommitment.status,
        owner: own.owner ?? predecessorCommitment.owner,
        dueAt: own.dueAt ?? predecessorCommitment.dueAt,
        nextSurfacingAt: own.dueAt !== null ? own.nextSurfacingAt : predecessorCommitment.nextSurfacingAt,
        resolvedAt: predecessorCommitment.resolvedAt,
      });
    }
    await freezeCommitment(db, tenantId, predecessorCommitment.id);
    const moved = own.status === "open" && predecessorCommitment.status !== "open";
    return { carriedTo: successor.id, ...(moved ? { moved: { commitmentId: own.id, from: own.status, to: predecessorCommitment.status } } : {}) };
  }
  if (predecessorCommitment.status === "open" || predecessorCommitment.status === "waiting") {
    await updateCommitmentStatus(db, tenantId, predecessorCommitment.id, "resolved");
    return { resolved: { commitmentId: predecessorCommitment.id, from: predecessorCommitment.status } };
  }
  await freezeCommitment(db, tenantId, predecessorCommitment.id);
  return {};
}

/**
 * Asserts an open fact proposal as a fact, valid from when its memory became true, and marks it
 * applied. When the same value is already current for subject + predicate the proposal is linked
 * to that fact instead of opening an identical generation.
 */
async function applyFact(db: PoolClient, actor: Actor, id: string): Promise<void> {
  const tenantId = actor.tenantId;
  const proposal = assertOpen(id, await selectFactProposal(db, tenantId, id, { lock: true }));
  let factId: string;
  const current = await selectOpenFact(db, tenantId, proposal.subject, proposal.predicate);
  if (current !== null && current.value === proposal.value) {
    factId = current.id;
  } else {
    const validFrom = await selectValidFrom(db, tenantId, proposal.memoryId);
    const asserted = await assertFact(db, {
      id: uuidv7(),
      tenantId,
      memoryId: proposal.memoryId,
      subject: proposal.subject,
      predicate: proposal.predicate,
      value: proposal.value,
      confidence: proposal.confidence,
      validFrom,
    });
    if (asserted === null) {
      throw new AppError(
        "conflict",
        `proposal ${id}: a later value of this fact is already current; reject the proposal or record the fact with a newer memory`,
        {
          ids: { proposal: id },
        },
      );
    }
    factId = asserted.row.id;
    await insertEvent(db, {
      id: uuidv7(),
      tenantId,
      memoryId: proposal.memoryId,
      kind: "fact",
      actor: actor.kind,
      payload: { factId, proposalId: id, ...(asserted.closedId ? { closedFactId: asserted.closedId } : {}) },
    });
  }
  await decideFactProposal(db, tenantId, id, { status: "applied", decidedBy: actor.userId ?? null, rationale: null, factId });
}
