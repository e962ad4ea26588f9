/**
 * Supersession, the commitment state machine, archive and history, through the real memory
 * service over gRPC on a fresh PostgreSQL database; row-level facts are checked with the owner pool.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RpcClients } from "@3ngram/rpc";
import type { CommitmentStatus as CommitmentStatusNumber, EdgeIntent, memoryServices } from "@3ngram/proto/memory/v1";
import { AppError } from "@3ngram/errors";
import { COMMITMENT_STATUSES, COMMITMENT_TRANSITIONS, type CommitmentStatus } from "@3ngram/schema";
import { startCoreServices, type CoreServices, type PublicMemoryClient } from "../../../../test/support/core-services.js";
import { reader, rejection, writer } from "../../../../test/support/calls.js";

type Tenant = { tenantId: string; userId: string; apiKey: string };
type RememberInit = Parameters<PublicMemoryClient["memories"]["remember"]>[0];

let stack: CoreServices;
let memory: PublicMemoryClient;
/** Proto messages as they are, for what a public value cannot say (a number no enum holds). */
let raw: RpcClients<typeof memoryServices>;
let tenantA: Tenant;
let tenantB: Tenant;

const UNKNOWN_ID = "01890a5d-ac96-774b-bcce-b302099a8057";

/** What a caller can observe of an error, with one id blanked so unknown and foreign answers compare. */
function observable(err: AppError, id: string) {
  return { reason: err.reason, message: err.message.replaceAll(id, "ID"), details: JSON.parse(JSON.stringify(err.details).replaceAll(id, "ID")) as unknown };
}

let seq = 0;
/** Unique content, so the live-duplicate guard never trips by accident. */
const unique = (label: string) => `${label} ${randomUUID()} #${++seq}`;

async function remember(t: Tenant, fields: Partial<RememberInit> & Pick<RememberInit, "memoryType">) {
  const stored = await memory.memories.remember({ topic: "topic", content: unique(fields.memoryType), ...fields } as RememberInit, writer(t));
  // A write answers with the memory's identity only; read it back whole.
  return readOne(t, stored.memory!.id);
}

function revise(t: Tenant, predecessorId: string, successor: Partial<RememberInit>, edgeIntent?: "supersedes" | "updates") {
  return memory.memories.revise({ predecessorId, edgeIntent, memoryType: "note", topic: "revised", content: unique("revised"), ...successor }, writer(t));
}

async function ownerRows<T>(sql: string, params: unknown[]): Promise<T[]> {
  return (await stack.ownerPool.query(sql, params)).rows as T[];
}

async function eventsOf(memoryId: string): Promise<{ kind: string; actor: string; payload: Record<string, unknown> | null }[]> {
  return ownerRows("SELECT event_kind AS kind, actor_kind AS actor, payload FROM memory_events WHERE memory_id = $1 ORDER BY created_at, id", [memoryId]);
}

async function commitmentRow(memoryId: string) {
  const [row] = await ownerRows<{
    id: string;
    status: string;
    owner: string | null;
    due_at: Date | null;
    next_surfacing_at: Date | null;
    resolved_at: Date | null;
  }>("SELECT id, status, owner, due_at, next_surfacing_at, resolved_at FROM commitments WHERE memory_id = $1", [memoryId]);
  return row;
}

async function readOne(t: Tenant, id: string) {
  const read = await memory.memories.getMemories({ ids: [id] }, reader(t));
  expect(read.notFound).toEqual([]);
  return read.memories[0]!;
}

beforeAll(async () => {
  stack = await startCoreServices({ label: "lifecycle" });
  memory = await stack.publicMemoryClient();
  raw = await stack.memoryClient();
  tenantA = await stack.createTenant("lifecycle a");
  tenantB = await stack.createTenant("lifecycle b");
});
afterAll(async () => {
  await stack?.close();
});

describe("revise", () => {
  it("appends a successor and an edge; the predecessor keeps its content and gets its valid time closed", async () => {
    const original = await remember(tenantA, { memoryType: "decision", topic: "db", content: unique("We use MySQL"), project: "core", tags: ["db"] });
    const out = await revise(tenantA, original.id, { memoryType: "decision", topic: "db", content: "We use PostgreSQL instead.", project: "core" });
    expect(out).toMatchObject({ predecessorId: original.id, edgeIntent: "supersedes", embedded: "done" });
    const successorId = out.memory!.id;
    expect(successorId).not.toBe(original.id);

    const before = await readOne(tenantA, original.id);
    expect(before).toMatchObject({ content: original.content, topic: original.topic, status: "active", supersededBy: successorId });
    expect(before.validTo).not.toBeNull();
    const after = await readOne(tenantA, successorId);
    expect(after).toMatchObject({ content: "We use PostgreSQL instead.", status: "active", embedded: "done" });
    expect(after.validTo).toBeNull();
    expect(after.supersededBy).toBeNull();

    const [pred] = await ownerRows<{ valid_to: Date; closed_recorded_at: Date; recorded_at: Date; content: string }>(
      "SELECT valid_to, closed_recorded_at, recorded_at, content FROM memories WHERE id = $1",
      [original.id],
    );
    expect(pred!.content).toBe(original.content);
    expect(pred!.closed_recorded_at).toBeInstanceOf(Date);
    expect(pred!.valid_to.getTime()).toBe(new Date(before.validTo!).getTime());
    expect(pred!.closed_recorded_at.getTime()).toBeGreaterThanOrEqual(pred!.recorded_at.getTime());

    const edges = await ownerRows("SELECT from_id, to_id, edge_type, actor_kind, created_by FROM memory_edges WHERE to_id = $1", [original.id]);
    expect(edges).toEqual([{ from_id: successorId, to_id: original.id, edge_type: "supersedes", actor_kind: "system", created_by: tenantA.userId }]);

    expect((await eventsOf(successorId)).map((e) => e.kind)).toEqual(["create", "revise"]);
    expect((await eventsOf(successorId))[1]!.payload).toEqual({ predecessorId: original.id, edgeType: "supersedes" });
    const predEvents = await eventsOf(original.id);
    expect(predEvents.map((e) => e.kind)).toEqual(["create", "supersede"]);
    expect(predEvents[1]!.payload).toEqual({ successorId, edgeType: "supersedes" });
  });

  it("links with updates on request and allows the very same content (the predecessor's slot is freed)", async () => {
    const content = unique("Deploys happen on Tuesdays");
    const original = await remember(tenantA, { memoryType: "pattern", content });
    const out = await revise(tenantA, original.id, { memoryType: "pattern", content }, "updates");
    expect(out.edgeIntent).toBe("updates");
    const [edge] = await ownerRows<{ edge_type: string }>("SELECT edge_type FROM memory_edges WHERE to_id = $1", [original.id]);
    expect(edge!.edge_type).toBe("updates");
    expect((await readOne(tenantA, original.id)).supersededBy).toBe(out.memory!.id);
    // The freed slot is taken again: a third copy of the content is a duplicate of the successor.
    const dup = await rejection(memory.memories.remember({ memoryType: "note", topic: "t", content }, writer(tenantA)));
    expect(dup.reason).toBe("duplicate_memory");
    expect(dup.details.ids?.existing).toBe(out.memory!.id);
  });

  it("writes the successor's facts in the same transaction", async () => {
    const original = await remember(tenantA, { memoryType: "fact", content: unique("Squat top set 100 kg") });
    const subject = `lifter-${randomUUID()}`;
    const out = await revise(tenantA, original.id, {
      memoryType: "fact",
      facts: [{ subject, predicate: "top_set.weight_kg", value: "105" }],
    });
    expect(out.facts).toHaveLength(1);
    expect(out.facts[0]).toMatchObject({ subject, predicate: "top_set.weight_kg", value: "105", memoryId: out.memory!.id });
  });

  it("answers conflict naming the current head when the predecessor is already superseded", async () => {
    const a = await remember(tenantA, { memoryType: "note" });
    const b = (await revise(tenantA, a.id, {})).memory!;
    const c = (await revise(tenantA, b.id, {})).memory!;
    for (const old of [a.id, b.id]) {
      const err = await rejection(revise(tenantA, old, {}));
      expect(err.reason).toBe("conflict");
      expect(err.details.ids?.head).toBe(c.id);
      expect(err.message).toBe(`memory ${old} is already superseded; the current head is ${c.id}`);
    }
    // Nothing was written by the refused calls.
    expect(await ownerRows("SELECT 1 FROM memory_edges WHERE to_id = ANY($1::uuid[])", [[a.id, b.id, c.id]])).toHaveLength(2);
  });

  it("refuses an archived predecessor with conflict", async () => {
    const a = await remember(tenantA, { memoryType: "note" });
    await memory.memories.archive({ memoryId: a.id }, writer(tenantA));
    const err = await rejection(revise(tenantA, a.id, {}));
    expect(err.reason).toBe("conflict");
    expect(err.message).toBe(`memory ${a.id} is archived`);
  });

  it("refuses content another live memory holds, writing nothing", async () => {
    const holder = await remember(tenantA, { memoryType: "note" });
    const a = await remember(tenantA, { memoryType: "note" });
    const err = await rejection(revise(tenantA, a.id, { content: holder.content }));
    expect(err.reason).toBe("duplicate_memory");
    expect(err.details.ids?.existing).toBe(holder.id);
    const after = await readOne(tenantA, a.id);
    expect(after.validTo).toBeNull();
    expect(after.supersededBy).toBeNull();
    expect(await ownerRows("SELECT 1 FROM memory_edges WHERE to_id = $1", [a.id])).toEqual([]);
    expect((await eventsOf(a.id)).map((e) => e.kind)).toEqual(["create"]);
  });

  it("validates input naming the field", async () => {
    const a = await remember(tenantA, { memoryType: "note" });
    // An intent no enum value names can only come from a foreign client: an unknown number.
    const badEdge = await rejection(
      raw.memories.revise({ predecessorId: a.id, edgeIntent: 7 as EdgeIntent, memoryType: 7, topic: "t", content: unique("x") }, writer(tenantA)),
    );
    expect(badEdge).toMatchObject({ reason: "invalid_input", details: { field: "edgeIntent" } });
    const badId = await rejection(revise(tenantA, "not-a-uuid", {}));
    expect(badId).toMatchObject({ reason: "invalid_input", details: { field: "predecessorId" } });
    const dueOnNote = await rejection(revise(tenantA, a.id, { dueAt: new Date("2030-01-01T00:00:00Z").toISOString() }));
    expect(dueOnNote).toMatchObject({ reason: "invalid_input", details: { field: "dueAt" } });
    const noSuccessor = await rejection(raw.memories.revise({ predecessorId: a.id }, writer(tenantA)));
    expect(noSuccessor).toMatchObject({ reason: "invalid_input", details: { field: "memoryType" } });
    const readOnly = await rejection(memory.memories.revise({ predecessorId: a.id, memoryType: "note", topic: "t", content: unique("x") }, reader(tenantA)));
    expect(readOnly.reason).toBe("insufficient_scope");
    expect((await readOne(tenantA, a.id)).supersededBy).toBeNull();
  });

  it("answers another tenant's id exactly like an unknown id", async () => {
    const a = await remember(tenantA, { memoryType: "note" });
    const foreign = await rejection(revise(tenantB, a.id, {}));
    const unknown = await rejection(revise(tenantB, UNKNOWN_ID, {}));
    expect(foreign.reason).toBe("not_found");
    expect(observable(foreign, a.id)).toEqual(observable(unknown, UNKNOWN_ID));
    expect((await readOne(tenantA, a.id)).supersededBy).toBeNull();
    expect(await ownerRows("SELECT 1 FROM memories WHERE tenant_id = $1 AND content LIKE 'revised %'", [tenantB.tenantId])).toEqual([]);
  });

  describe("20 concurrent revisions of one predecessor", () => {
    for (const variant of ["different contents", "the same content"] as const) {
      it(`produce exactly one successor and 19 conflicts naming it (${variant})`, async () => {
        const a = await remember(tenantA, { memoryType: "decision" });
        const shared = unique("shared successor");
        const contents = Array.from({ length: 20 }, (_, i) => (variant === "the same content" ? shared : unique(`racer ${i}`)));
        const outcomes = await Promise.allSettled(contents.map((content) => revise(tenantA, a.id, { memoryType: "decision", content })));
        const winners = outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
        const losers = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason as AppError] : []));
        expect(winners).toHaveLength(1);
        const winnerId = winners[0]!.memory!.id;
        expect(losers).toHaveLength(19);
        for (const err of losers) {
          expect(err).toBeInstanceOf(AppError);
          expect(err.reason).toBe("conflict");
          expect(err.details.ids?.head).toBe(winnerId);
          expect(err.message).toContain(winnerId);
        }
        // Nothing half-written: one successor row, one edge, one supersede event, no orphans.
        const written = await ownerRows<{ id: string }>("SELECT id FROM memories WHERE tenant_id = $1 AND content = ANY($2::text[])", [
          tenantA.tenantId,
          contents,
        ]);
        expect(written.map((r) => r.id)).toEqual([winnerId]);
        expect(await ownerRows("SELECT from_id FROM memory_edges WHERE to_id = $1", [a.id])).toEqual([{ from_id: winnerId }]);
        expect((await eventsOf(a.id)).map((e) => e.kind)).toEqual(["create", "supersede"]);
        expect((await eventsOf(winnerId)).map((e) => e.kind)).toEqual(["create", "revise"]);
        expect((await readOne(tenantA, a.id)).supersededBy).toBe(winnerId);
      });
    }
  });
});

describe("commitment carry-over on revise", () => {
  const due = new Date("2031-03-04T05:06:07.000Z");

  it("commitment → commitment: status, owner and due date survive on the successor", async () => {
    const a = await remember(tenantA, { memoryType: "commitment", owner: "ana", dueAt: due.toISOString() });
    await memory.memories.resolve({ memoryId: a.id, status: "waiting" }, writer(tenantA));
    const oldCommitment = (await commitmentRow(a.id))!;

    const b = await revise(tenantA, a.id, { memoryType: "commitment" });
    expect(b.commitment).toMatchObject({ status: "waiting", owner: "ana" });
    expect(new Date(b.commitment!.dueAt!).toISOString()).toBe(due.toISOString());
    const carried = (await commitmentRow(b.memory!.id))!;
    expect(carried.id).not.toBe(oldCommitment.id);
    expect(carried).toMatchObject({ status: "waiting", owner: "ana", due_at: due, next_surfacing_at: due, resolved_at: null });
    // The predecessor's row stays as the record of its state, never scheduled again.
    expect(await commitmentRow(a.id)).toMatchObject({ id: oldCommitment.id, status: "waiting", owner: "ana", due_at: due, next_surfacing_at: null });
    expect((await eventsOf(b.memory!.id)).find((e) => e.kind === "revise")!.payload).toEqual({
      predecessorId: a.id,
      edgeType: "supersedes",
      carriedFromCommitmentId: oldCommitment.id,
    });

    // dueAt and owner given in the revise win over the carried ones.
    const newDue = new Date("2032-01-01T00:00:00.000Z");
    const c = await revise(tenantA, b.memory!.id, { memoryType: "commitment", owner: "bo", dueAt: newDue.toISOString() });
    expect(c.commitment).toMatchObject({ status: "waiting", owner: "bo" });
    expect(await commitmentRow(c.memory!.id)).toMatchObject({ status: "waiting", owner: "bo", due_at: newDue, next_surfacing_at: newDue });
    const d = await revise(tenantA, c.memory!.id, { memoryType: "commitment", owner: "cy" });
    expect(await commitmentRow(d.memory!.id)).toMatchObject({ status: "waiting", owner: "cy", due_at: newDue });
  });

  it("commitment → commitment keeps a resolved commitment resolved", async () => {
    const a = await remember(tenantA, { memoryType: "commitment" });
    await memory.memories.resolve({ memoryId: a.id, status: "resolved" }, writer(tenantA));
    const resolvedAt = (await commitmentRow(a.id))!.resolved_at;
    const b = await revise(tenantA, a.id, { memoryType: "commitment" });
    expect(await commitmentRow(b.memory!.id)).toMatchObject({ status: "resolved", resolved_at: resolvedAt });
  });

  it("commitment → another type resolves a live commitment and leaves a finished one alone", async () => {
    const open = await remember(tenantA, { memoryType: "commitment" });
    const out = await revise(tenantA, open.id, { memoryType: "decision" });
    expect(out.commitment).toBeUndefined();
    expect(await commitmentRow(out.memory!.id)).toBeUndefined();
    const row = (await commitmentRow(open.id))!;
    expect(row.status).toBe("resolved");
    expect(row.resolved_at).toBeInstanceOf(Date);
    const events = await eventsOf(open.id);
    expect(events.map((e) => e.kind)).toEqual(["create", "supersede", "resolve"]);
    expect(events[2]!.payload).toEqual({ commitmentId: row.id, from: "open", to: "resolved", successorId: out.memory!.id });

    const expired = await remember(tenantA, { memoryType: "commitment" });
    await memory.memories.resolve({ memoryId: expired.id, status: "expired" }, writer(tenantA));
    await revise(tenantA, expired.id, { memoryType: "note" });
    expect((await commitmentRow(expired.id))!.status).toBe("expired");
    expect((await eventsOf(expired.id)).map((e) => e.kind)).toEqual(["create", "status_change", "supersede"]);
  });

  it("another type → commitment creates an open commitment with the given owner and due date", async () => {
    const a = await remember(tenantA, { memoryType: "note" });
    const out = await revise(tenantA, a.id, { memoryType: "commitment", owner: "dee", dueAt: due.toISOString() });
    expect(out.commitment).toMatchObject({ status: "open", owner: "dee" });
    expect(await commitmentRow(out.memory!.id)).toMatchObject({ status: "open", owner: "dee", due_at: due });
  });
});

describe("resolve", () => {
  it("walks a commitment through every legal transition, with resolved_at and one event per move", async () => {
    const c = await remember(tenantA, { memoryType: "commitment" });
    const path: CommitmentStatus[] = ["waiting", "open", "resolved", "open", "expired", "open", "waiting", "resolved", "open", "waiting", "expired", "open"];
    const covered = new Set<string>();
    let from: CommitmentStatus = "open";
    for (const to of path) {
      const out = await memory.memories.resolve({ memoryId: c.id, status: to }, writer(tenantA));
      expect(out).toEqual({
        memoryId: c.id,
        commitmentId: (await commitmentRow(c.id))!.id,
        status: to,
        previousStatus: from,
      });
      const row = (await commitmentRow(c.id))!;
      expect(row.status).toBe(to);
      expect(row.resolved_at === null).toBe(to !== "resolved");
      covered.add(`${from}->${to}`);
      from = to;
    }
    const legal = Object.entries(COMMITMENT_TRANSITIONS).flatMap(([f, tos]) => tos.map((t) => `${f}->${t}`));
    expect([...covered].sort()).toEqual(legal.sort());

    const events = (await eventsOf(c.id)).slice(1);
    const expectedKind = (to: CommitmentStatus) => (to === "resolved" ? "resolve" : to === "open" ? "unresolve" : "status_change");
    expect(events.map((e) => e.kind)).toEqual(path.map(expectedKind));
    expect(events[0]!.payload).toEqual({ commitmentId: (await commitmentRow(c.id))!.id, from: "open", to: "waiting" });
  });

  it("treats the current state as a no-op and refuses an illegal move with invalid_transition", async () => {
    const c = await remember(tenantA, { memoryType: "commitment" });
    const same = await memory.memories.resolve({ memoryId: c.id, status: "open" }, writer(tenantA));
    expect(same).toMatchObject({ status: "open", previousStatus: "open" });
    expect((await eventsOf(c.id)).map((e) => e.kind)).toEqual(["create"]);

    await memory.memories.resolve({ memoryId: c.id, status: "resolved" }, writer(tenantA));
    const illegal = await rejection(memory.memories.resolve({ memoryId: c.id, status: "waiting" }, writer(tenantA)));
    expect(illegal.reason).toBe("invalid_transition");
    expect(illegal.message).toBe("resolved -> waiting");
    expect((await commitmentRow(c.id))!.status).toBe("resolved");

    await memory.memories.resolve({ memoryId: c.id, status: "open" }, writer(tenantA));
    await memory.memories.resolve({ memoryId: c.id, status: "expired" }, writer(tenantA));
    const fromExpired = await rejection(memory.memories.resolve({ memoryId: c.id, status: "resolved" }, writer(tenantA)));
    expect(fromExpired).toMatchObject({ reason: "invalid_transition", message: "expired -> resolved" });

    const badStatus = await rejection(raw.memories.resolve({ memoryId: c.id, status: 9 as CommitmentStatusNumber }, writer(tenantA)));
    expect(badStatus).toMatchObject({ reason: "invalid_input", details: { field: "status" } });
  });

  it("archives a live blocker, and only once", async () => {
    const b = await remember(tenantA, { memoryType: "blocker" });
    const wrong = await rejection(memory.memories.resolve({ memoryId: b.id, status: "waiting" }, writer(tenantA)));
    expect(wrong.reason).toBe("invalid_transition");
    expect(wrong.message).toMatch(/^active -> waiting/);

    const out = await memory.memories.resolve({ memoryId: b.id, status: "resolved" }, writer(tenantA));
    expect(out).toMatchObject({ memoryId: b.id, commitmentId: b.id, status: "archived", previousStatus: "active" });
    const read = await readOne(tenantA, b.id);
    expect(read.status).toBe("archived");
    expect(read.validTo).not.toBeNull();
    const [row] = await ownerRows<{ closed_recorded_at: Date | null; content: string }>("SELECT closed_recorded_at, content FROM memories WHERE id = $1", [
      b.id,
    ]);
    expect(row!.closed_recorded_at).toBeInstanceOf(Date);
    expect(row!.content).toBe(b.content);
    const events = await eventsOf(b.id);
    expect(events.map((e) => e.kind)).toEqual(["create", "archive"]);
    expect(events[1]!.payload).toEqual({ via: "resolve", requested: "resolved" });

    const again = await rejection(memory.memories.resolve({ memoryId: b.id, status: "resolved" }, writer(tenantA)));
    expect(again).toMatchObject({ reason: "conflict", message: `memory ${b.id} is archived` });
  });

  it("answers not_found for memories without a commitment, unknown ids and other tenants' ids alike", async () => {
    const note = await remember(tenantA, { memoryType: "note" });
    const noCommitment = await rejection(memory.memories.resolve({ memoryId: note.id, status: "resolved" }, writer(tenantA)));
    expect(noCommitment).toMatchObject({ reason: "not_found", message: `no commitment for memory ${note.id}` });

    const commitment = await remember(tenantA, { memoryType: "commitment" });
    const blocker = await remember(tenantA, { memoryType: "blocker" });
    for (const mine of [commitment.id, blocker.id]) {
      const foreign = await rejection(memory.memories.resolve({ memoryId: mine, status: "resolved" }, writer(tenantB)));
      const unknown = await rejection(memory.memories.resolve({ memoryId: UNKNOWN_ID, status: "resolved" }, writer(tenantB)));
      expect(foreign.reason).toBe("not_found");
      expect(observable(foreign, mine)).toEqual(observable(unknown, UNKNOWN_ID));
    }
    expect((await commitmentRow(commitment.id))!.status).toBe("open");
    expect((await readOne(tenantA, blocker.id)).status).toBe("active");
  });

  it("refuses to move a superseded commitment, naming the current head", async () => {
    const a = await remember(tenantA, { memoryType: "commitment" });
    const b = await revise(tenantA, a.id, { memoryType: "commitment" });
    const err = await rejection(memory.memories.resolve({ memoryId: a.id, status: "resolved" }, writer(tenantA)));
    expect(err).toMatchObject({ reason: "conflict", details: { ids: { head: b.memory!.id } } });
    expect((await commitmentRow(a.id))!.status).toBe("open");
    expect((await memory.memories.resolve({ memoryId: b.memory!.id, status: "resolved" }, writer(tenantA))).status).toBe("resolved");
  });
});

describe("archive", () => {
  it("archives a live memory once, keeping it readable and its valid time open", async () => {
    const a = await remember(tenantA, { memoryType: "decision" });
    const out = await memory.memories.archive({ memoryId: a.id }, writer(tenantA));
    expect(out).toMatchObject({ id: a.id, status: "archived" });
    const read = await readOne(tenantA, a.id);
    expect(read).toMatchObject({ status: "archived", content: a.content });
    expect(read.validTo).toBeNull();
    expect((await eventsOf(a.id)).map((e) => [e.kind, e.payload])).toEqual([
      ["create", expect.anything()],
      ["archive", { via: "archive" }],
    ]);
    const again = await rejection(memory.memories.archive({ memoryId: a.id }, writer(tenantA)));
    expect(again).toMatchObject({ reason: "conflict", message: `memory ${a.id} is archived` });
  });

  it("refuses a superseded memory with conflict naming the head", async () => {
    const a = await remember(tenantA, { memoryType: "note" });
    const b = await revise(tenantA, a.id, {});
    const err = await rejection(memory.memories.archive({ memoryId: a.id }, writer(tenantA)));
    expect(err).toMatchObject({ reason: "conflict", details: { ids: { head: b.memory!.id } } });
    expect((await readOne(tenantA, a.id)).status).toBe("active");
  });

  it("answers unknown and other tenants' ids alike, and needs memory:write", async () => {
    const a = await remember(tenantA, { memoryType: "note" });
    const foreign = await rejection(memory.memories.archive({ memoryId: a.id }, writer(tenantB)));
    const unknown = await rejection(memory.memories.archive({ memoryId: UNKNOWN_ID }, writer(tenantB)));
    expect(foreign.reason).toBe("not_found");
    expect(observable(foreign, a.id)).toEqual(observable(unknown, UNKNOWN_ID));
    expect((await rejection(memory.memories.archive({ memoryId: a.id }, reader(tenantA)))).reason).toBe("insufficient_scope");
    expect((await rejection(memory.memories.archive({ memoryId: "nope" }, writer(tenantA)))).details.field).toBe("memoryId");
    expect((await readOne(tenantA, a.id)).status).toBe("active");
  });
});

describe("history", () => {
  it("returns the lineage oldest first, its edges and events, and each member's lifecycle state", async () => {
    const a = await remember(tenantA, { memoryType: "commitment" });
    const b = (await revise(tenantA, a.id, { memoryType: "commitment" })).memory!;
    const c = (await revise(tenantA, b.id, { memoryType: "commitment" }, "updates")).memory!;
    await memory.memories.resolve({ memoryId: c.id, status: "resolved" }, writer(tenantA));
    const unrelated = await remember(tenantA, { memoryType: "note" });

    for (const asked of [a.id, b.id, c.id]) {
      const h = await memory.memories.getHistory({ memoryId: asked }, reader(tenantA));
      expect(h.memoryId).toBe(asked);
      expect(h.lineage.map((m) => m.id)).toEqual([a.id, b.id, c.id]);
      expect(h.lineage.map((m) => m.supersededBy ?? null)).toEqual([b.id, c.id, null]);
      expect(h.edges.map((e) => [e.fromId, e.toId, e.edgeType])).toEqual([
        [b.id, a.id, "supersedes"],
        [c.id, b.id, "updates"],
      ]);
      expect(h.events.map((e) => [e.memoryId, e.kind])).toEqual([
        [a.id, "create"],
        [b.id, "create"],
        [b.id, "revise"],
        [a.id, "supersede"],
        [c.id, "create"],
        [c.id, "revise"],
        [b.id, "supersede"],
        [c.id, "resolve"],
      ]);
      expect(h.events.every((e) => e.actor === "system")).toBe(true);
      expect(h.events.at(-1)!.payload).toMatchObject({ from: "open", to: "resolved" });
      expect(h.lifecycleState).toBe(asked === c.id ? "current" : "superseded");
    }
    const alone = await memory.memories.getHistory({ memoryId: unrelated.id }, reader(tenantA));
    expect(alone.lineage.map((m) => m.id)).toEqual([unrelated.id]);
    expect(alone.edges).toEqual([]);
    expect(alone.lifecycleState).toBe("current");
    await memory.memories.archive({ memoryId: unrelated.id }, writer(tenantA));
    expect((await memory.memories.getHistory({ memoryId: unrelated.id }, reader(tenantA))).lifecycleState).toBe("archived");
  });

  it("bounds the lineage to 25 memories and the events to the newest 50", async () => {
    const ids = [(await remember(tenantA, { memoryType: "note" })).id];
    for (let i = 0; i < 29; i++) ids.push((await revise(tenantA, ids.at(-1)!, {})).memory!.id);
    const head = ids.at(-1)!;
    const h = await memory.memories.getHistory({ memoryId: head }, reader(tenantA));
    // Nearest to the asked-for memory first: the head and the 24 versions before it.
    expect(h.lineage.map((m) => m.id)).toEqual(ids.slice(-25));
    expect(h.edges).toHaveLength(24);
    expect(h.events).toHaveLength(50);
    const last = h.events.at(-1)!;
    expect([last.memoryId, last.kind]).toEqual([ids.at(-2), "supersede"]);
    const times = h.events.map((e) => new Date(e.createdAt!).getTime());
    expect([...times].sort((x, y) => x - y)).toEqual(times);

    const middle = await memory.memories.getHistory({ memoryId: ids[0]! }, reader(tenantA));
    expect(middle.lineage.map((m) => m.id)).toEqual(ids.slice(0, 25));
  });

  it("answers unknown and other tenants' ids alike", async () => {
    const a = await remember(tenantA, { memoryType: "note" });
    const foreign = await rejection(memory.memories.getHistory({ memoryId: a.id }, reader(tenantB)));
    const unknown = await rejection(memory.memories.getHistory({ memoryId: UNKNOWN_ID }, reader(tenantB)));
    expect(foreign.reason).toBe("not_found");
    expect(observable(foreign, a.id)).toEqual(observable(unknown, UNKNOWN_ID));
  });
});

describe("database guarantees behind the lifecycle", () => {
  /** Runs statements as the runtime role for one tenant in a transaction that is always rolled back. */
  async function asRuntimeRole<T>(
    tenantId: string,
    fn: (q: (sql: string, params?: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>) => Promise<T>,
  ): Promise<T> {
    const client = await stack.ownerPool.connect();
    try {
      await client.query("BEGIN");
      await client.query("SET LOCAL ROLE threengram_app");
      await client.query("SELECT set_config('app.tenant_id', $1, true)", [tenantId]);
      return await fn((sql, params = []) => client.query(sql, params));
    } finally {
      await client.query("ROLLBACK");
      client.release();
    }
  }
  const refused = (tenantId: string, sql: string) => asRuntimeRole(tenantId, (q) => q(sql));

  it("the runtime role cannot delete or rewrite edges, facts, commitments or events", async () => {
    // Rows of every kind exist for tenant A by now (revisions, facts, commitments, events).
    const t = tenantA.tenantId;
    for (const table of ["memory_edges", "facts", "commitments", "memory_events"]) {
      const [count] = await ownerRows<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = $1`, [t]);
      expect(count!.n, table).toBeGreaterThan(0);
    }
    const statements = [
      "DELETE FROM memory_edges",
      "UPDATE memory_edges SET edge_type = 'extends'",
      "UPDATE memory_edges SET to_id = from_id",
      "DELETE FROM facts",
      "UPDATE facts SET value = 'rewritten'",
      "UPDATE facts SET subject = 'someone else'",
      "DELETE FROM commitments",
      "UPDATE commitments SET memory_id = gen_random_uuid()",
      "DELETE FROM memory_events",
      "UPDATE memory_events SET payload = '{}'::jsonb",
      "UPDATE memory_events SET event_kind = 'create'",
      "DELETE FROM memories",
      "UPDATE memories SET content = 'rewritten'",
      "UPDATE memories SET topic = 'rewritten'",
    ];
    for (const sql of statements) await expect(refused(t, sql), sql).rejects.toThrow(/permission denied/);
  });

  it("the trigger refuses an illegal status change made directly as the runtime role", async () => {
    const c = await remember(tenantA, { memoryType: "commitment" });
    await memory.memories.resolve({ memoryId: c.id, status: "resolved" }, writer(tenantA));
    await expect(
      asRuntimeRole(tenantA.tenantId, (q) => q("UPDATE commitments SET status = 'waiting' WHERE tenant_id = $1 AND memory_id = $2", [tenantA.tenantId, c.id])),
    ).rejects.toThrow(/invalid_transition: resolved -> waiting/);
    // A legal one goes through (and is rolled back by the helper).
    const moved = await asRuntimeRole(tenantA.tenantId, (q) =>
      q("UPDATE commitments SET status = 'open' WHERE tenant_id = $1 AND memory_id = $2 RETURNING status", [tenantA.tenantId, c.id]),
    );
    expect(moved.rows).toEqual([{ status: "open" }]);
    expect((await commitmentRow(c.id))!.status).toBe("resolved");
  });

  it("the trigger allows exactly the transitions in COMMITMENT_TRANSITIONS", async () => {
    const allowedByDb: Record<string, string[]> = {};
    await asRuntimeRole(tenantA.tenantId, async (q) => {
      const t = tenantA.tenantId;
      for (const from of COMMITMENT_STATUSES) {
        allowedByDb[from] = [];
        for (const to of COMMITMENT_STATUSES) {
          if (to === from) continue;
          await q("SAVEPOINT pair");
          const memoryId = randomUUID();
          await q("INSERT INTO memories (id, tenant_id, memory_type, topic, content, content_hash) VALUES ($1, $2, 'commitment', 't', 'c', $3)", [
            memoryId,
            t,
            randomUUID(),
          ]);
          // Inserts are not checked: a commitment may start in any state (imports do).
          await q("INSERT INTO commitments (id, tenant_id, memory_id, status) VALUES ($1, $2, $3, $4)", [randomUUID(), t, memoryId, from]);
          try {
            await q("UPDATE commitments SET status = $3 WHERE tenant_id = $1 AND memory_id = $2", [t, memoryId, to]);
            allowedByDb[from]!.push(to);
          } catch (err) {
            expect((err as Error).message).toBe(`invalid_transition: ${from} -> ${to}`);
          }
          await q("ROLLBACK TO SAVEPOINT pair");
        }
      }
    });
    const expected = Object.fromEntries(COMMITMENT_STATUSES.map((s) => [s, [...COMMITMENT_TRANSITIONS[s]].sort()]));
    expect(Object.fromEntries(Object.entries(allowedByDb).map(([k, v]) => [k, v.sort()]))).toEqual(expected);
  });
});
