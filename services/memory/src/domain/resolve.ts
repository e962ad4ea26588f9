import { uuidv7 } from "uuidv7";
import { AppError } from "@3ngram/errors";
import { withTenant, type PoolClient } from "@3ngram/db";
import { COMMITMENT_TRANSITIONS, type CommitmentStatus, type ResolveInput } from "@3ngram/schema";
import { lockCommitmentOfMemory, updateCommitmentStatus, type CommitmentState } from "../db/commitments.js";
import { archiveMemory, lockMemory, type MemoryState } from "../db/lifecycle.js";
import { insertEvent, type EventKind } from "../db/memories.js";
import type { Actor, MemoryDeps } from "./deps.js";
import { notLive } from "./lifecycle-guard.js";

export interface ResolveResult {
  memoryId: string;
  /** The commitment's id; for a blocker, the memory's own id. */
  commitmentId: string;
  status: CommitmentStatus | "archived";
  previousStatus: CommitmentStatus | "active";
}

/** Whether the state machine allows from → to. The same state is not a move (resolve treats it as a no-op). */
function isLegalTransition(from: CommitmentStatus, to: CommitmentStatus): boolean {
  return COMMITMENT_TRANSITIONS[from].includes(to);
}

/**
 * Moves a memory's commitment through its state machine, or archives a live blocker (the way a
 * blocker resolves). Anything else has no commitment to move: unknown ids and other tenants' ids
 * get that same answer.
 */
export async function resolve(deps: MemoryDeps, actor: Actor, input: ResolveInput): Promise<ResolveResult> {
  const memoryId = input.memoryId.toLowerCase();
  const result = await withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId }, async (db) => {
    // The memory lock orders this against a concurrent revise of the same memory.
    const memory = await lockMemory(db, actor.tenantId, memoryId);
    if (memory === null) throw noCommitment(memoryId);
    const commitment = await lockCommitmentOfMemory(db, actor.tenantId, memoryId);
    if (commitment !== null) return moveCommitment(db, actor, memory, commitment, input.status);
    if (memory.memoryType === "blocker") return resolveBlocker(db, actor, memory, input.status);
    throw noCommitment(memoryId);
  }).catch((err: unknown) => {
    // The database trigger is the backstop behind the check above; its refusal reads the same.
    const refused = triggerRefusal(err);
    throw refused ?? err;
  });
  deps.log.info({ memoryId, from: result.previousStatus, to: result.status }, "commitment resolved");
  return result;
}

async function moveCommitment(db: PoolClient, actor: Actor, memory: MemoryState, commitment: CommitmentState, to: CommitmentStatus): Promise<ResolveResult> {
  // A superseded memory's commitment is history; its successor carries the live one.
  const blocked = await notLive(db, actor.tenantId, memory);
  if (blocked) throw blocked;
  const from = commitment.status;
  const answer = { memoryId: memory.id, commitmentId: commitment.id, status: to, previousStatus: from };
  if (from === to) return answer;
  if (!isLegalTransition(from, to)) throw new AppError("invalid_transition", `${from} -> ${to}`, { ids: { commitment: commitment.id } });
  await updateCommitmentStatus(db, actor.tenantId, commitment.id, to);
  await insertEvent(db, {
    id: uuidv7(),
    tenantId: actor.tenantId,
    memoryId: memory.id,
    kind: commitmentEventKind(to),
    actor: actor.kind,
    payload: { commitmentId: commitment.id, from, to },
  });
  return answer;
}

/** The audit event a commitment's move to `to` is recorded as (changes-since reads follow them). */
export function commitmentEventKind(to: CommitmentStatus): EventKind {
  if (to === "resolved") return "resolve";
  if (to === "open") return "unresolve";
  return "status_change";
}

/** A blocker has no state machine: resolving (or expiring) it archives it and ends its valid time. */
async function resolveBlocker(db: PoolClient, actor: Actor, memory: MemoryState, to: CommitmentStatus): Promise<ResolveResult> {
  const blocked = await notLive(db, actor.tenantId, memory);
  if (blocked) throw blocked;
  if (to !== "resolved" && to !== "expired") {
    throw new AppError("invalid_transition", `active -> ${to}: a blocker is resolved or expired, which archives it`, { ids: { memory: memory.id } });
  }
  await archiveMemory(db, actor.tenantId, memory.id, { close: true });
  await insertEvent(db, {
    id: uuidv7(),
    tenantId: actor.tenantId,
    memoryId: memory.id,
    kind: "archive",
    actor: actor.kind,
    payload: { via: "resolve", requested: to },
  });
  return { memoryId: memory.id, commitmentId: memory.id, status: "archived", previousStatus: "active" };
}

/** The commitments trigger raises check_violation with "invalid_transition: from -> to". */
function triggerRefusal(err: unknown): AppError | null {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e === null || typeof e !== "object" || e.code !== "23514" || typeof e.message !== "string") return null;
  const match = /^invalid_transition: (\w+ -> \w+)$/.exec(e.message);
  return match ? new AppError("invalid_transition", match[1]!) : null;
}

function noCommitment(memoryId: string): AppError {
  return new AppError("not_found", `no commitment for memory ${memoryId}`);
}
