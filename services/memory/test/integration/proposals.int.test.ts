/**
 * Proposals and the consolidator's maintenance RPCs, through the real memory service over gRPC on a
 * fresh PostgreSQL database: storage of both kinds in one id space, list / accept / reject, the
 * never-again rule for decided pairs and claims, the grants behind it, the tenant directory, the
 * pending-embedding listing and the commitment expiry sweep. Row-level facts are read with the
 * owner pool; the extraction jobs the service queues are read from the real Redis queue.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppError } from "@3ngram/errors";
import type { EdgeType, ProposalStatus, memoryServices } from "@3ngram/proto/memory/v1";
import { createRedisQueueBackend, type QueueBackend } from "@3ngram/queue";
import { SCOPES, type CallOptions, type RpcClients } from "@3ngram/rpc";
import { EXTRACTION_QUEUE } from "@3ngram/schema";
import { startCoreServices, type CoreServices, type PublicMemoryClient } from "../../../../test/support/core-services.js";
import { reader, rejection, writer } from "../../../../test/support/calls.js";
import { TEST_REDIS_URL } from "../../../../test/support/database.js";
import { eventually } from "../../../../test/support/processes.js";
import { waitPastOnServer } from "../../../../test/support/clock.js";

type Tenant = { tenantId: string; userId: string; apiKey: string };
type RememberInit = Parameters<PublicMemoryClient["memories"]["remember"]>[0];

let stack: CoreServices;
let memory: PublicMemoryClient;
/** Proto messages as they are, for what a public value cannot say (a number no enum holds). */
let raw: RpcClients<typeof memoryServices>;
let queue: QueueBackend;
let tenantA: Tenant;
let tenantB: Tenant;

const UNKNOWN_ID = "01890a5d-ac96-774b-bcce-b302099a8057";

/** The consolidator's credential: internal scope, acting in a tenant (or none, for the directory). */
const consolidator = (t?: Tenant): CallOptions => ({
  identity: { ...(t ? { tenantId: t.tenantId } : {}), scopes: [SCOPES.internalConsolidate] },
});
const embedder = (t: Tenant): CallOptions => ({ identity: { tenantId: t.tenantId, scopes: [SCOPES.internalEmbed] } });

let seq = 0;
const unique = (label: string) => `${label} ${randomUUID()} #${++seq}`;

async function remember(t: Tenant, fields: Partial<RememberInit> & Pick<RememberInit, "memoryType">) {
  const stored = await memory.memories.remember({ topic: "topic", content: unique(fields.memoryType), ...fields } as RememberInit, writer(t));
  // A write answers with the memory's identity only; read it back whole.
  return (await memory.memories.getMemories({ ids: [stored.memory!.id] }, reader(t))).memories[0]!;
}

async function ownerRows<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  return (await stack.ownerPool.query(sql, params)).rows as T[];
}

function observable(err: AppError, id: string) {
  return { reason: err.reason, message: err.message.replaceAll(id, "ID"), details: JSON.parse(JSON.stringify(err.details).replaceAll(id, "ID")) as unknown };
}

async function propose(t: Tenant, fromId: string, toId: string, edgeType: "extends" | "updates" | "supersedes" = "supersedes", similarity = 0.95) {
  return memory.proposals.createConsolidationProposals({ proposals: [{ fromId, toId, edgeType, similarity, rationale: "cosine test" }] }, consolidator(t));
}

beforeAll(async () => {
  stack = await startCoreServices({ label: "proposals" });
  memory = await stack.publicMemoryClient();
  raw = await stack.memoryClient();
  queue = createRedisQueueBackend({ redisUrl: TEST_REDIS_URL, prefix: stack.redisPrefix });
  tenantA = await stack.createTenant("proposals a");
  tenantB = await stack.createTenant("proposals b");
});

afterAll(async () => {
  await queue?.close();
  await stack?.close();
});

describe("extraction is queued for every new memory", () => {
  it("remember and revise each queue one extract-facts job", async () => {
    // First in this file: nothing else has written yet, so the queue holds exactly these.
    const noted = await remember(tenantA, { memoryType: "note" });
    await memory.memories.revise({ predecessorId: noted.id, memoryType: "note", topic: "t", content: unique("revised") }, writer(tenantA));
    await eventually(async () => expect((await queue.counts(EXTRACTION_QUEUE)).waiting).toBe(2));
  });
});

describe("consolidation proposals", () => {
  it("only the consolidator's internal scope may hand proposals over", async () => {
    const [a, b] = [await remember(tenantA, { memoryType: "note" }), await remember(tenantA, { memoryType: "note" })];
    const refused = await rejection(
      memory.proposals.createConsolidationProposals({ proposals: [{ fromId: a.id, toId: b.id, edgeType: "extends", similarity: 0.9 }] }, writer(tenantA)),
    );
    expect(refused.reason).toBe("insufficient_scope");
    const facts = await rejection(memory.proposals.createFactProposals({ memoryId: a.id, extractor: "rules/1", facts: [] }, writer(tenantA)));
    expect(facts.reason).toBe("insufficient_scope");
  });

  it("stores a pair once, ever: not again in either orientation or as another edge type", async () => {
    const older = await remember(tenantA, { memoryType: "decision" });
    const newer = await remember(tenantA, { memoryType: "decision" });
    const first = await propose(tenantA, newer.id, older.id);
    expect(first.createdIds).toHaveLength(1);
    expect(first.skipped).toBe(0);
    const again = await memory.proposals.createConsolidationProposals(
      {
        proposals: [
          { fromId: newer.id, toId: older.id, edgeType: "supersedes", similarity: 0.95 },
          { fromId: older.id, toId: newer.id, edgeType: "extends", similarity: 0.95 },
        ],
      },
      consolidator(tenantA),
    );
    expect(again).toMatchObject({ createdIds: [], skipped: 2 });
    const rows = await ownerRows<{ n: number }>(
      "SELECT count(*)::int AS n FROM consolidation_proposals WHERE LEAST(from_id, to_id) = LEAST($1::uuid, $2::uuid) AND GREATEST(from_id, to_id) = GREATEST($1::uuid, $2::uuid)",
      [newer.id, older.id],
    );
    expect(rows[0]!.n).toBe(1);
    const [kind] = await ownerRows<{ kind: string }>("SELECT kind FROM proposal_ids WHERE id = $1", [first.createdIds[0]]);
    expect(kind).toEqual({ kind: "edge" });
  });

  it("skips pairs that are not both live, are already linked, or name another tenant's or an unknown memory", async () => {
    const a = await remember(tenantA, { memoryType: "note" });
    const b = await remember(tenantA, { memoryType: "note" });
    const archived = await remember(tenantA, { memoryType: "note" });
    await memory.memories.archive({ memoryId: archived.id }, writer(tenantA));
    const revised = await remember(tenantA, { memoryType: "note" });
    const head = await memory.memories.revise({ predecessorId: revised.id, memoryType: "note", topic: "t", content: unique("head") }, writer(tenantA));
    const foreign = await remember(tenantB, { memoryType: "note" });
    const result = await memory.proposals.createConsolidationProposals(
      {
        proposals: [
          { fromId: a.id, toId: archived.id, edgeType: "extends", similarity: 0.9 },
          { fromId: head.memory!.id, toId: revised.id, edgeType: "supersedes", similarity: 0.99 },
          { fromId: a.id, toId: foreign.id, edgeType: "extends", similarity: 0.9 },
          { fromId: a.id, toId: UNKNOWN_ID, edgeType: "extends", similarity: 0.9 },
          { fromId: a.id, toId: b.id, edgeType: "extends", similarity: 0.88 },
        ],
      },
      consolidator(tenantA),
    );
    expect(result.createdIds).toHaveLength(1);
    expect(result.skipped).toBe(4);
    const refused = await rejection(
      // derives is an edge type, but never a proposed one.
      raw.proposals.createConsolidationProposals(
        { proposals: [{ fromId: a.id, toId: b.id, edgeType: 4 as EdgeType, similarity: 0.9 }] },
        consolidator(tenantA),
      ),
    );
    expect(refused).toMatchObject({ reason: "invalid_input" });
    expect(refused.details.field).toMatch(/edgeType/);
  });

  it("lists open proposals newest first with both topics; status and limit narrow it", async () => {
    const older = await remember(tenantB, { memoryType: "preference", topic: "coffee" });
    const newer = await remember(tenantB, { memoryType: "preference", topic: "coffee again" });
    const third = await remember(tenantB, { memoryType: "note", topic: "tea" });
    const p1 = (await propose(tenantB, newer.id, older.id, "supersedes", 0.97)).createdIds[0]!;
    const p2 = (await propose(tenantB, third.id, older.id, "extends", 0.86)).createdIds[0]!;
    const listed = await memory.proposals.listProposals({}, reader(tenantB));
    expect(listed.proposals.map((p) => p.id)).toEqual([p2, p1]);
    // None to show: the public shape leaves the list out.
    expect(listed.factProposals).toBeUndefined();
    expect(listed.proposals[1]).toMatchObject({
      fromId: newer.id,
      toId: older.id,
      edgeType: "supersedes",
      memoryType: "preference",
      fromTopic: "coffee again",
      toTopic: "coffee",
      similarity: 0.97,
      rationale: "cosine test",
      status: "proposed",
    });
    expect(listed.proposals[1]!.decidedAt).toBeNull();
    expect((await memory.proposals.listProposals({ limit: 1 }, reader(tenantB))).proposals.map((p) => p.id)).toEqual([p2]);
    expect((await memory.proposals.listProposals({ status: "applied" }, reader(tenantB))).proposals).toEqual([]);
    // Tenant A sees none of B's.
    const mine = await memory.proposals.listProposals({ limit: 100 }, reader(tenantA));
    expect(mine.proposals.map((p) => p.id)).not.toContain(p1);
    const bad = await rejection(raw.proposals.listProposals({ status: 9 as ProposalStatus }, reader(tenantB)));
    expect(bad.details.field).toBe("status");
    expect((await rejection(memory.proposals.listProposals({ limit: 101 }, reader(tenantB)))).details.field).toBe("limit");
  });

  it("accepting supersedes closes the predecessor exactly like revise and records who decided", async () => {
    const older = await remember(tenantA, { memoryType: "decision", topic: "db" });
    const newer = await remember(tenantA, { memoryType: "decision", topic: "db restated" });
    const id = (await propose(tenantA, newer.id, older.id)).createdIds[0]!;
    const accepted = await memory.proposals.acceptProposal({ proposalId: id }, writer(tenantA));
    expect(accepted.fact).toBeUndefined();
    expect(accepted.edge).toMatchObject({ id, status: "applied", edgeType: "supersedes" });
    expect(accepted.edge!.decidedAt).not.toBeNull();

    const read = await memory.memories.getMemories({ ids: [older.id, newer.id] }, reader(tenantA));
    const olderNow = read.memories.find((m) => m.id === older.id)!;
    expect(olderNow.supersededBy).toBe(newer.id);
    expect(olderNow.validTo).not.toBeNull();
    expect(read.memories.find((m) => m.id === newer.id)!.validTo).toBeNull();
    const [edge] = await ownerRows<{ from_id: string; to_id: string; edge_type: string; proposal_id: string; created_by: string }>(
      "SELECT from_id, to_id, edge_type, proposal_id, created_by FROM memory_edges WHERE to_id = $1",
      [older.id],
    );
    expect(edge).toEqual({ from_id: newer.id, to_id: older.id, edge_type: "supersedes", proposal_id: id, created_by: tenantA.userId });
    const [row] = await ownerRows<{ decided_by: string; closed: Date | null }>(
      "SELECT p.decided_by, m.closed_recorded_at AS closed FROM consolidation_proposals p JOIN memories m ON m.id = p.to_id WHERE p.id = $1",
      [id],
    );
    expect(row!.decided_by).toBe(tenantA.userId);
    expect(row!.closed).not.toBeNull();
    const events = await ownerRows<{ kind: string; payload: Record<string, unknown> }>(
      "SELECT event_kind AS kind, payload FROM memory_events WHERE memory_id = $1 AND event_kind = 'supersede'",
      [older.id],
    );
    expect(events).toEqual([{ kind: "supersede", payload: { successorId: newer.id, edgeType: "supersedes", proposalId: id } }]);

    // Decided: a second accept or a reject is a conflict, and the pair is never proposed again.
    expect((await rejection(memory.proposals.acceptProposal({ proposalId: id }, writer(tenantA)))).reason).toBe("conflict");
    expect((await rejection(memory.proposals.rejectProposal({ proposalId: id }, writer(tenantA)))).message).toMatch(/already applied/);
    expect((await propose(tenantA, newer.id, older.id, "extends")).createdIds).toEqual([]);
  });

  it("accepting extends links the two and closes nothing", async () => {
    const older = await remember(tenantA, { memoryType: "note" });
    const newer = await remember(tenantA, { memoryType: "note" });
    const id = (await propose(tenantA, newer.id, older.id, "extends", 0.87)).createdIds[0]!;
    await memory.proposals.acceptProposal({ proposalId: id }, writer(tenantA));
    const read = await memory.memories.getMemories({ ids: [older.id] }, reader(tenantA));
    expect(read.memories[0]).toMatchObject({ id: older.id });
    expect(read.memories[0]!.validTo).toBeNull();
    expect(read.memories[0]!.supersededBy).toBeNull();
    const edges = await ownerRows<{ edge_type: string }>("SELECT edge_type FROM memory_edges WHERE from_id = $1 AND to_id = $2", [newer.id, older.id]);
    expect(edges).toEqual([{ edge_type: "extends" }]);
  });

  it("refuses to apply when an end is no longer live, naming the head, and keeps the proposal open", async () => {
    const older = await remember(tenantA, { memoryType: "decision" });
    const newer = await remember(tenantA, { memoryType: "decision" });
    const id = (await propose(tenantA, newer.id, older.id)).createdIds[0]!;
    const head = await memory.memories.revise({ predecessorId: older.id, memoryType: "decision", topic: "t", content: unique("by hand") }, writer(tenantA));
    const refused = await rejection(memory.proposals.acceptProposal({ proposalId: id }, writer(tenantA)));
    expect(refused.reason).toBe("conflict");
    expect(refused.message).toContain(head.memory!.id);
    const [row] = await ownerRows<{ status: string }>("SELECT status FROM consolidation_proposals WHERE id = $1", [id]);
    expect(row!.status).toBe("proposed");
    expect(await ownerRows("SELECT 1 FROM memory_edges WHERE proposal_id = $1", [id])).toEqual([]);
    // The reviewer can still reject it.
    expect((await memory.proposals.rejectProposal({ proposalId: id }, writer(tenantA))).edge!.status).toBe("rejected");
  });

  it("carries a commitment over to a commitment successor, and resolves it for any other type", async () => {
    const due = new Date("2031-05-01T00:00:00Z");
    const promise = await remember(tenantA, { memoryType: "commitment", owner: "ana", dueAt: due.toISOString() });
    await memory.memories.resolve({ memoryId: promise.id, status: "waiting" }, writer(tenantA));
    const restated = await remember(tenantA, { memoryType: "commitment" });
    const carried = (await propose(tenantA, restated.id, promise.id)).createdIds[0]!;
    await memory.proposals.acceptProposal({ proposalId: carried }, writer(tenantA));
    const successor = (await memory.memories.getMemories({ ids: [restated.id] }, reader(tenantA))).memories[0]!.commitment!;
    expect(successor).toMatchObject({ status: "waiting", owner: "ana" });
    expect(new Date(successor.dueAt!).toISOString()).toBe(due.toISOString());
    const [frozen] = await ownerRows<{ next_surfacing_at: Date | null }>("SELECT next_surfacing_at FROM commitments WHERE memory_id = $1", [promise.id]);
    expect(frozen!.next_surfacing_at).toBeNull();

    const task = await remember(tenantA, { memoryType: "commitment" });
    const note = await remember(tenantA, { memoryType: "note" });
    const updates = (await propose(tenantA, note.id, task.id, "updates")).createdIds[0]!;
    await memory.proposals.acceptProposal({ proposalId: updates }, writer(tenantA));
    const [resolved] = await ownerRows<{ status: string }>("SELECT status FROM commitments WHERE memory_id = $1", [task.id]);
    expect(resolved!.status).toBe("resolved");
    const kinds = await ownerRows<{ kind: string }>("SELECT event_kind AS kind FROM memory_events WHERE memory_id = $1 ORDER BY created_at, id", [task.id]);
    expect(kinds.map((k) => k.kind)).toEqual(["create", "supersede", "resolve"]);
  });

  it("records the state a commitment successor takes over, so a changes-since briefing reports it", async () => {
    const project = `carry ${randomUUID()}`;
    const done = await remember(tenantA, { memoryType: "commitment", project });
    await memory.memories.resolve({ memoryId: done.id, status: "resolved" }, writer(tenantA));
    const restated = await remember(tenantA, { memoryType: "commitment", project });
    const selector = { kind: "project", project } as const;
    const before = await memory.orientation.briefing({ selector, mode: "full" }, reader(tenantA));
    expect(before.commitments!.items.map((i) => i.memoryId)).toEqual([restated.id]);

    const id = (await propose(tenantA, restated.id, done.id)).createdIds[0]!;
    await memory.proposals.acceptProposal({ proposalId: id }, writer(tenantA));
    const since = await memory.orientation.briefing({ selector, mode: "full", since: before.changesCursor! }, reader(tenantA));
    expect(since.commitments!.items.map((i) => [i.change, i.memoryId])).toEqual([["resolved", restated.id]]);
    const events = await ownerRows<{ kind: string; payload: Record<string, string> }>(
      "SELECT event_kind AS kind, payload FROM memory_events WHERE memory_id = $1 ORDER BY created_at, id",
      [restated.id],
    );
    expect(events.map((e) => e.kind)).toEqual(["create", "resolve"]);
    expect(events[1]!.payload).toMatchObject({ from: "open", to: "resolved", carriedFromMemoryId: done.id, proposalId: id });
  });

  it("ends the predecessor's valid time where the successor's begins, recorded at the accept, as revise does", async () => {
    const older = await remember(tenantA, { memoryType: "decision" });
    const newer = await remember(tenantA, { memoryType: "decision" });
    const id = (await propose(tenantA, newer.id, older.id)).createdIds[0]!;
    // The accept lands on a later millisecond than the successor's start, so the two can be told apart.
    await waitPastOnServer(stack.ownerPool, Date.parse(newer.recordedAt));
    await memory.proposals.acceptProposal({ proposalId: id }, writer(tenantA));
    const [closed] = await ownerRows<{ valid_to: Date; closed_recorded_at: Date; successor_from: Date }>(
      `SELECT p.valid_to, p.closed_recorded_at, s.valid_from AS successor_from
         FROM memories p JOIN memories s ON s.id = $2 WHERE p.id = $1`,
      [older.id, newer.id],
    );
    expect(closed!.valid_to.getTime()).toBe(closed!.successor_from.getTime());
    expect(closed!.closed_recorded_at.getTime()).toBeGreaterThan(closed!.successor_from.getTime());
  });

  it("never supersedes an event", async () => {
    const event = await remember(tenantA, { memoryType: "event" });
    const note = await remember(tenantA, { memoryType: "note" });
    const id = (await propose(tenantA, note.id, event.id, "supersedes")).createdIds[0]!;
    expect((await rejection(memory.proposals.acceptProposal({ proposalId: id }, writer(tenantA)))).message).toMatch(/event/);
  });

  it("rejects with the reviewer's reason stored, and the pair stays rejected when offered again", async () => {
    const older = await remember(tenantA, { memoryType: "pattern" });
    const newer = await remember(tenantA, { memoryType: "pattern" });
    const id = (await propose(tenantA, newer.id, older.id)).createdIds[0]!;
    const rejected = await memory.proposals.rejectProposal({ proposalId: id, rationale: "different projects" }, writer(tenantA));
    expect(rejected.edge).toMatchObject({ id, status: "rejected", decisionRationale: "different projects" });
    expect((await propose(tenantA, older.id, newer.id, "extends")).createdIds).toEqual([]);
    const listed = await memory.proposals.listProposals({ status: "rejected", limit: 100 }, reader(tenantA));
    expect(listed.proposals.find((p) => p.id === id)?.decisionRationale).toBe("different projects");
    expect((await rejection(memory.proposals.rejectProposal({ proposalId: id, rationale: "x".repeat(2001) }, writer(tenantA)))).details.field).toBe(
      "rationale",
    );
  });

  it("answers another tenant's proposal id exactly like an unknown one, and needs the write scope", async () => {
    const older = await remember(tenantA, { memoryType: "note" });
    const newer = await remember(tenantA, { memoryType: "note" });
    const id = (await propose(tenantA, newer.id, older.id, "extends")).createdIds[0]!;
    for (const call of [
      (pid: string) => memory.proposals.acceptProposal({ proposalId: pid }, writer(tenantB)),
      (pid: string) => memory.proposals.rejectProposal({ proposalId: pid }, writer(tenantB)),
    ]) {
      const foreign = await rejection(call(id));
      const unknown = await rejection(call(UNKNOWN_ID));
      expect(foreign.reason).toBe("not_found");
      expect(observable(foreign, id)).toEqual(observable(unknown, UNKNOWN_ID));
    }
    expect((await rejection(memory.proposals.acceptProposal({ proposalId: id }, reader(tenantA)))).reason).toBe("insufficient_scope");
    expect((await rejection(memory.proposals.acceptProposal({ proposalId: "nope" }, writer(tenantA)))).details.field).toBe("proposalId");
    const [row] = await ownerRows<{ status: string }>("SELECT status FROM consolidation_proposals WHERE id = $1", [id]);
    expect(row!.status).toBe("proposed");
  });
});

describe("reading one proposal", () => {
  it("answers either kind in any status by id, to the read scope, and another tenant's id like an unknown one", async () => {
    const older = await remember(tenantA, { memoryType: "decision" });
    const newer = await remember(tenantA, { memoryType: "decision" });
    const edgeId = (await propose(tenantA, newer.id, older.id)).createdIds[0]!;
    const source = await remember(tenantA, { memoryType: "fact", topic: "swim", content: unique("Swam 2 km") });
    const factId = (
      await memory.proposals.createFactProposals(
        { memoryId: source.id, extractor: "rules/1", facts: [{ subject: "swim", predicate: "distance_km", value: "2" }] },
        consolidator(tenantA),
      )
    ).createdIds[0]!;

    const edge = await memory.proposals.getProposal({ proposalId: edgeId.toUpperCase() }, reader(tenantA));
    expect(edge.fact).toBeUndefined();
    expect(edge.edge).toMatchObject({ id: edgeId, fromId: newer.id, toId: older.id, edgeType: "supersedes", status: "proposed" });
    const fact = await memory.proposals.getProposal({ proposalId: factId }, reader(tenantA));
    expect(fact.edge).toBeUndefined();
    expect(fact.fact).toMatchObject({ id: factId, memoryId: source.id, subject: "swim", value: "2", status: "proposed" });

    await memory.proposals.rejectProposal({ proposalId: edgeId, rationale: "not the same plan" }, writer(tenantA));
    expect((await memory.proposals.getProposal({ proposalId: edgeId }, reader(tenantA))).edge).toMatchObject({
      status: "rejected",
      decisionRationale: "not the same plan",
    });

    const foreign = await rejection(memory.proposals.getProposal({ proposalId: factId }, reader(tenantB)));
    const unknown = await rejection(memory.proposals.getProposal({ proposalId: UNKNOWN_ID }, reader(tenantB)));
    expect(foreign.reason).toBe("not_found");
    expect(observable(foreign, factId)).toEqual(observable(unknown, UNKNOWN_ID));
    expect((await rejection(memory.proposals.getProposal({ proposalId: "nope" }, reader(tenantA)))).details.field).toBe("proposalId");
    expect((await rejection(memory.proposals.getProposal({ proposalId: factId }, embedder(tenantA)))).reason).toBe("insufficient_scope");
  });
});

describe("fact proposals", () => {
  it("stores an extractor's claims once; a claim already written as the memory's fact is skipped", async () => {
    const lift = await remember(tenantA, {
      memoryType: "fact",
      topic: "back squat",
      content: unique("Top set 98 kg"),
      facts: [{ subject: "back_squat", predicate: "top_set.reps", value: "3" }],
    });
    const offered = {
      memoryId: lift.id,
      extractor: "rules/1",
      facts: [
        { subject: "back_squat", predicate: "top_set.weight_kg", value: "98", confidence: 0.8, rationale: "rule:measure(kg)" },
        { subject: "back_squat", predicate: "top_set.reps", value: "3" },
      ],
    };
    const first = await memory.proposals.createFactProposals(offered, consolidator(tenantA));
    expect(first.createdIds).toHaveLength(1);
    expect(first.skipped).toBe(1);
    expect(await memory.proposals.createFactProposals(offered, consolidator(tenantA))).toMatchObject({ createdIds: [], skipped: 2 });
    const [kind] = await ownerRows<{ kind: string }>("SELECT kind FROM proposal_ids WHERE id = $1", [first.createdIds[0]]);
    expect(kind).toEqual({ kind: "fact" });

    const listed = await memory.proposals.listProposals({}, reader(tenantA));
    expect(listed.factProposals!.map((f) => f.id)).toContain(first.createdIds[0]);
    expect(listed.factProposals!.find((f) => f.id === first.createdIds[0])).toMatchObject({
      memoryId: lift.id,
      subject: "back_squat",
      predicate: "top_set.weight_kg",
      value: "98",
      extractor: "rules/1",
      rationale: "rule:measure(kg)",
      status: "proposed",
    });
    expect(Math.abs(listed.factProposals!.find((f) => f.id === first.createdIds[0])!.confidence! - 0.8)).toBeLessThan(1e-6);
  });

  it("refuses an unknown or another tenant's memory, and a claim that breaks the fact bounds", async () => {
    const foreign = await remember(tenantB, { memoryType: "note" });
    for (const memoryId of [foreign.id, UNKNOWN_ID]) {
      const refused = await rejection(
        memory.proposals.createFactProposals({ memoryId, extractor: "rules/1", facts: [{ subject: "s", predicate: "p", value: "v" }] }, consolidator(tenantA)),
      );
      expect(refused.reason).toBe("not_found");
    }
    const note = await remember(tenantA, { memoryType: "note" });
    const bad = await rejection(
      memory.proposals.createFactProposals(
        { memoryId: note.id, extractor: "rules/1", facts: [{ subject: "s", predicate: "p".repeat(257), value: "v" }] },
        consolidator(tenantA),
      ),
    );
    expect(bad.details.field).toBe("facts.0.predicate");
  });

  it("accepting asserts the fact from the memory's valid time so get_facts returns it; the proposal links to it", async () => {
    const run = await remember(tenantA, { memoryType: "fact", topic: "run", content: unique("Ran 5 km") });
    const id = (
      await memory.proposals.createFactProposals(
        { memoryId: run.id, extractor: "rules/1", facts: [{ subject: "morning_run", predicate: "distance_km", value: "5" }] },
        consolidator(tenantA),
      )
    ).createdIds[0]!;
    expect((await memory.memories.getFacts({ subject: "morning_run" }, reader(tenantA))).facts).toEqual([]);
    const accepted = await memory.proposals.acceptProposal({ proposalId: id }, writer(tenantA));
    expect(accepted.edge).toBeUndefined();
    expect(accepted.fact).toMatchObject({ id, status: "applied" });
    const [fact] = (await memory.memories.getFacts({ subject: "morning_run" }, reader(tenantA))).facts;
    expect(fact).toMatchObject({ predicate: "distance_km", value: "5", memoryId: run.id, id: accepted.fact!.factId });
    expect(new Date(fact!.validFrom!).toISOString()).toBe(new Date(run.validFrom!).toISOString());
    const events = await ownerRows<{ payload: Record<string, unknown> }>("SELECT payload FROM memory_events WHERE memory_id = $1 AND event_kind = 'fact'", [
      run.id,
    ]);
    expect(events).toEqual([{ payload: { factId: fact!.id, proposalId: id } }]);
  });

  it("links to the current fact when it already holds the value, and refuses a value older than the current one", async () => {
    const first = await remember(tenantA, { memoryType: "fact", topic: "weight", content: unique("80 kg") });
    const second = await remember(tenantA, { memoryType: "fact", topic: "weight", content: unique("80 kg again") });
    const claim = { subject: "body", predicate: "weight_kg", value: "80" };
    const p1 = (await memory.proposals.createFactProposals({ memoryId: first.id, extractor: "rules/1", facts: [claim] }, consolidator(tenantA))).createdIds[0]!;
    const p2 = (await memory.proposals.createFactProposals({ memoryId: second.id, extractor: "rules/1", facts: [claim] }, consolidator(tenantA)))
      .createdIds[0]!;
    const a1 = await memory.proposals.acceptProposal({ proposalId: p1 }, writer(tenantA));
    const a2 = await memory.proposals.acceptProposal({ proposalId: p2 }, writer(tenantA));
    expect(a2.fact!.factId).toBe(a1.fact!.factId);
    expect((await memory.memories.getFacts({ subject: "body", range: {} }, reader(tenantA))).facts).toHaveLength(1);

    const newer = await remember(tenantA, { memoryType: "fact", topic: "weight", content: unique("82 kg") });
    const older = first;
    const pNew = (
      await memory.proposals.createFactProposals({ memoryId: newer.id, extractor: "rules/1", facts: [{ ...claim, value: "82" }] }, consolidator(tenantA))
    ).createdIds[0]!;
    const pOld = (
      await memory.proposals.createFactProposals({ memoryId: older.id, extractor: "rules/1", facts: [{ ...claim, value: "79" }] }, consolidator(tenantA))
    ).createdIds[0]!;
    await memory.proposals.acceptProposal({ proposalId: pNew }, writer(tenantA));
    const refused = await rejection(memory.proposals.acceptProposal({ proposalId: pOld }, writer(tenantA)));
    expect(refused.reason).toBe("conflict");
    // Ids in the message are hex and may contain "79" by chance; only the value must never appear.
    expect(refused.message.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<id>")).not.toContain("79");
    expect((await memory.memories.getFacts({ subject: "body" }, reader(tenantA))).facts.map((f) => f.value)).toEqual(["82"]);
    const rejected = await memory.proposals.rejectProposal({ proposalId: pOld, rationale: "stale" }, writer(tenantA));
    expect(rejected.fact).toMatchObject({ status: "rejected", decisionRationale: "stale" });
    expect(rejected.fact!.factId).toBeNull();
    // Rejected claims stay rejected when the extractor runs again.
    expect(
      (await memory.proposals.createFactProposals({ memoryId: older.id, extractor: "rules/1", facts: [{ ...claim, value: "79" }] }, consolidator(tenantA)))
        .createdIds,
    ).toEqual([]);
  });
});

describe("grants: proposals are append-and-decide only", () => {
  it("the runtime role can neither delete a proposal nor rewrite what was proposed", async () => {
    const older = await remember(tenantA, { memoryType: "note" });
    const newer = await remember(tenantA, { memoryType: "note" });
    const id = (await propose(tenantA, newer.id, older.id, "extends")).createdIds[0]!;
    const client = await stack.ownerPool.connect();
    try {
      for (const sql of [
        "DELETE FROM consolidation_proposals WHERE id = $1",
        "DELETE FROM proposal_ids WHERE id = $1",
        "UPDATE consolidation_proposals SET edge_type = 'supersedes' WHERE id = $1",
        "UPDATE fact_proposals SET value = 'x' WHERE id = $1",
      ]) {
        await client.query("BEGIN");
        await client.query("SET LOCAL ROLE threengram_app");
        await client.query("SELECT set_config('app.tenant_id', $1, true)", [tenantA.tenantId]);
        await expect(client.query(sql, [id]), sql).rejects.toThrow(/permission denied/);
        await client.query("ROLLBACK");
      }
    } finally {
      client.release();
    }
  });
});

describe("maintenance for the consolidator", () => {
  it("lists every tenant id, in pages, to the internal scope only", async () => {
    const all = (await memory.maintenance.listTenants({}, consolidator())).tenantIds;
    expect(all).toEqual(expect.arrayContaining([tenantA.tenantId, tenantB.tenantId]));
    expect([...all].sort()).toEqual(all);
    const firstPage = (await memory.maintenance.listTenants({ limit: 1 }, consolidator())).tenantIds;
    const nextPage = (await memory.maintenance.listTenants({ after: firstPage[0]!, limit: 1000 }, consolidator())).tenantIds;
    expect([...firstPage, ...nextPage]).toEqual(all);
    expect((await rejection(memory.maintenance.listTenants({}, writer(tenantA)))).reason).toBe("insufficient_scope");
    // The directory is opened only by that call: an ordinary tenant read still sees its own row only.
    const client = await stack.ownerPool.connect();
    try {
      await client.query("BEGIN");
      await client.query("SET LOCAL ROLE threengram_app");
      await client.query("SELECT set_config('app.tenant_id', $1, true)", [tenantA.tenantId]);
      const { rows } = await client.query<{ id: string }>("SELECT id FROM tenants");
      expect(rows.map((r) => r.id)).toEqual([tenantA.tenantId]);
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
  });

  it("lists memories without an embedding, or embedded by another model", async () => {
    const tenant = await stack.createTenant("pending embeddings");
    const embedded = await remember(tenant, { memoryType: "note" });
    const bare = await remember(tenant, { memoryType: "note" });
    await stack.ownerPool.query("UPDATE memories SET embedding = NULL, embedding_model = NULL, embedding_dim = NULL WHERE id = $1", [bare.id]);
    expect((await memory.maintenance.listPendingEmbeddings({ model: "hashing-512" }, embedder(tenant))).memoryIds).toEqual([bare.id]);
    expect((await memory.maintenance.listPendingEmbeddings({ model: "another-model" }, embedder(tenant))).memoryIds).toEqual([embedded.id, bare.id].sort());
    await memory.maintenance.storeEmbedding(
      { memoryId: bare.id, model: "hashing-512", vector: Array.from({ length: 512 }, (_, i) => (i === 0 ? 1 : 0)) },
      embedder(tenant),
    );
    expect((await memory.maintenance.listPendingEmbeddings({ model: "hashing-512" }, embedder(tenant))).memoryIds).toEqual([]);
    expect((await rejection(memory.maintenance.listPendingEmbeddings({ model: "x" }, writer(tenant)))).reason).toBe("insufficient_scope");
  });

  it("expires live commitments due before the cutoff through the state machine, once", async () => {
    const tenant = await stack.createTenant("sweep");
    const past = new Date(Date.now() - 3 * 86_400_000).toISOString();
    const overdueOpen = await remember(tenant, { memoryType: "commitment", dueAt: past });
    const overdueWaiting = await remember(tenant, { memoryType: "commitment", dueAt: past });
    await memory.memories.resolve({ memoryId: overdueWaiting.id, status: "waiting" }, writer(tenant));
    const done = await remember(tenant, { memoryType: "commitment", dueAt: past });
    await memory.memories.resolve({ memoryId: done.id, status: "resolved" }, writer(tenant));
    const future = await remember(tenant, { memoryType: "commitment", dueAt: new Date(Date.now() + 86_400_000).toISOString() });
    const revisedAway = await remember(tenant, { memoryType: "commitment", dueAt: past });
    await memory.memories.revise({ predecessorId: revisedAway.id, memoryType: "note", topic: "t", content: unique("no longer a promise") }, writer(tenant));
    const recent = await remember(tenant, { memoryType: "commitment", dueAt: new Date(Date.now() - 3_600_000).toISOString() });

    // Due more than a day ago; a cutoff in the future is clamped to now.
    const swept = await memory.maintenance.expireCommitments({ dueBefore: new Date(Date.now() - 86_400_000).toISOString() }, consolidator(tenant));
    expect([...swept.memoryIds].sort()).toEqual([overdueOpen.id, overdueWaiting.id].sort());
    const statuses = await ownerRows<{ memory_id: string; status: string }>("SELECT memory_id, status FROM commitments WHERE tenant_id = $1", [
      tenant.tenantId,
    ]);
    const status = Object.fromEntries(statuses.map((r) => [r.memory_id, r.status]));
    expect(status).toMatchObject({
      [overdueOpen.id]: "expired",
      [overdueWaiting.id]: "expired",
      [done.id]: "resolved",
      [future.id]: "open",
      [recent.id]: "open",
    });
    const events = await ownerRows<{ actor: string; payload: Record<string, unknown> }>(
      "SELECT actor_kind AS actor, payload FROM memory_events WHERE memory_id = $1 AND event_kind = 'status_change'",
      [overdueOpen.id],
    );
    expect(events).toEqual([{ actor: "system", payload: expect.objectContaining({ from: "open", to: "expired" }) }]);
    expect(
      (await memory.maintenance.expireCommitments({ dueBefore: new Date(Date.now() - 86_400_000).toISOString() }, consolidator(tenant))).memoryIds,
    ).toEqual([]);

    const later = await memory.maintenance.expireCommitments({ dueBefore: new Date(Date.now() + 7 * 86_400_000).toISOString() }, consolidator(tenant));
    expect(later.memoryIds).toEqual([recent.id]);
    expect(status[future.id]).toBe("open");
    expect((await rejection(raw.maintenance.expireCommitments({}, consolidator(tenant)))).details.field).toBe("dueBefore");
  });

  it("leaves a commitment someone reopened after it expired, until a revise gives it a new due time", async () => {
    const tenant = await stack.createTenant("sweep reopened");
    const past = new Date(Date.now() - 3 * 86_400_000).toISOString();
    const sweep = () => memory.maintenance.expireCommitments({ dueBefore: new Date(Date.now() - 86_400_000).toISOString() }, consolidator(tenant));
    const promise = await remember(tenant, { memoryType: "commitment", dueAt: past });
    expect((await sweep()).memoryIds).toEqual([promise.id]);
    await memory.memories.resolve({ memoryId: promise.id, status: "open" }, writer(tenant));
    expect((await sweep()).memoryIds).toEqual([]);
    const [row] = await ownerRows<{ status: string }>("SELECT status FROM commitments WHERE memory_id = $1", [promise.id]);
    expect(row!.status).toBe("open");
    // A new version with its own past due time is the sweep's again.
    const moved = await memory.memories.revise(
      { predecessorId: promise.id, memoryType: "commitment", topic: "t", content: unique("moved"), dueAt: new Date(Date.now() - 2 * 86_400_000).toISOString() },
      writer(tenant),
    );
    expect((await sweep()).memoryIds).toEqual([moved.memory!.id]);
  });
});
