/**
 * Bi-temporal facts through the real memory service over gRPC on a fresh PostgreSQL database:
 * remember writes them (closing the previous generation), GetFacts reads them now, as of a
 * valid/known instant, or over a valid-time window.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FactRecord as Fact } from "@3ngram/schema";
import { SCOPES } from "@3ngram/rpc";
import { startCoreServices, type CoreServices, type PublicMemoryClient } from "../../../../test/support/core-services.js";
import { rejection, writer } from "../../../../test/support/calls.js";
import { waitPastOnServer } from "../../../../test/support/clock.js";

type Tenant = { tenantId: string; userId: string; apiKey: string };

let stack: CoreServices;
let memory: PublicMemoryClient;
let tenantA: Tenant;
let tenantB: Tenant;

const readOnly = (t: Tenant) => ({ identity: { tenantId: t.tenantId, userId: t.userId, scopes: [SCOPES.read] } });

/** Timestamps travel in the public shape: RFC 3339 strings. */
type Timestamp = string;

const ms = (ts: Timestamp | null | undefined): number => new Date(ts!).getTime();
const ts = (millis: number): Timestamp => new Date(millis).toISOString();
const iso = (text: string): Timestamp => new Date(text).toISOString();
/** An instant strictly after `earlier` and strictly before `later` (both ms-truncated server values). */
const between = (earlier: number, later: number): Timestamp => {
  expect(later - earlier).toBeGreaterThanOrEqual(2);
  return ts(Math.floor((earlier + later) / 2));
};

async function count(table: "memories" | "facts", tenantId: string): Promise<number> {
  const { rows } = await stack.ownerPool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = $1`, [tenantId]);
  return rows[0]!.n;
}

/**
 * Waits until the database clock is at least 3 ms past `instant`, so the next write's recorded_at
 * (its transaction start, read back truncated to ms) lands at least 2 ms later and an instant
 * strictly between the two exists. Polls the server's clock, not the test's.
 */

/** Remembers one fact-carrying memory and returns the fact it wrote. */
async function assert(tenant: Tenant, fact: { subject: string; predicate: string; value: string; validFrom?: Timestamp }): Promise<Fact> {
  const stored = await memory.memories.remember(
    { memoryType: "fact", topic: fact.subject, content: `${fact.subject} ${fact.predicate} is now ${fact.value} (${randomUUID()})`, facts: [fact] },
    writer(tenant),
  );
  expect(stored.facts).toHaveLength(1);
  expect(stored.facts[0]!.memoryId).toBe(stored.memory!.id);
  return stored.facts[0]!;
}

const values = (facts: Fact[]) => facts.map((f) => f.value);
const ids = (facts: Fact[]) => facts.map((f) => f.id);

beforeAll(async () => {
  stack = await startCoreServices({ label: "facts" });
  memory = await stack.publicMemoryClient();
  tenantA = await stack.createTenant("facts tenant a");
  tenantB = await stack.createTenant("facts tenant b");
});
afterAll(async () => {
  await stack?.close();
});

describe("a fact that changes twice", () => {
  const subject = "lifter:ana";
  const predicate = "top_set.weight_kg";
  let g1: Fact;
  let g2: Fact;
  let g3: Fact;
  let r1: number;
  let r2: number;
  let r3: number;
  const query = { subject, predicate };

  beforeAll(async () => {
    g1 = await assert(tenantA, { subject, predicate, value: "80" });
    r1 = ms(g1.recordedAt);
    await waitPastOnServer(stack.ownerPool, r1);
    g2 = await assert(tenantA, { subject, predicate, value: "85" });
    r2 = ms(g2.recordedAt);
    await waitPastOnServer(stack.ownerPool, r2);
    g3 = await assert(tenantA, { subject, predicate, value: "90" });
    r3 = ms(g3.recordedAt);
  });

  it("remember returns each generation open, valid from its recording instant", () => {
    for (const g of [g1, g2, g3]) {
      expect(g.validTo).toBeNull();
      expect(ms(g.validFrom)).toBe(ms(g.recordedAt));
    }
    expect(r1).toBeLessThan(r2);
    expect(r2).toBeLessThan(r3);
  });

  it("each new value closed the previous generation on both clocks, and the event says so", async () => {
    const { rows } = await stack.ownerPool.query<{ id: string; validTo: Date | null; closedAt: Date | null; recordedAt: Date }>(
      `SELECT id, valid_to AS "validTo", closed_recorded_at AS "closedAt", recorded_at AS "recordedAt"
         FROM facts WHERE tenant_id = $1 AND subject = $2 AND predicate = $3 ORDER BY recorded_at`,
      [tenantA.tenantId, subject, predicate],
    );
    expect(rows.map((r) => r.id)).toEqual([g1.id, g2.id, g3.id]);
    expect(rows[0]!.validTo?.getTime()).toBe(r2);
    expect(rows[0]!.closedAt?.getTime()).toBe(r2);
    expect(rows[1]!.validTo?.getTime()).toBe(r3);
    expect(rows[1]!.closedAt?.getTime()).toBe(r3);
    expect(rows[2]!.validTo).toBeNull();
    expect(rows[2]!.closedAt).toBeNull();
    const events = await stack.ownerPool.query<{ payload: Record<string, string> }>(
      "SELECT payload FROM memory_events WHERE tenant_id = $1 AND memory_id = $2 AND event_kind = 'fact'",
      [tenantA.tenantId, g2.memoryId],
    );
    expect(events.rows).toEqual([{ payload: { factId: g2.id, closedFactId: g1.id } }]);
  });

  it("by default answers only the current generation", async () => {
    const now = await memory.memories.getFacts(query, readOnly(tenantA));
    expect(ids(now.facts)).toEqual([g3.id]);
    expect(now.facts[0]).toMatchObject({ subject, predicate, value: "90" });
    expect(now.facts[0]!.validTo).toBeNull();
  });

  it("asKnownAt between the 2nd and 3rd writes returns the middle generation, as it was then: open", async () => {
    const out = await memory.memories.getFacts({ ...query, asOf: { asKnownAt: between(r2, r3) } }, readOnly(tenantA));
    expect(ids(out.facts)).toEqual([g2.id]);
    expect(out.facts[0]!.value).toBe("85");
    expect(out.facts[0]!.validTo).toBeNull();
  });

  it("asKnownAt between the 1st and 2nd writes returns the first generation although it is closed now", async () => {
    const out = await memory.memories.getFacts({ ...query, asOf: { asKnownAt: between(r1, r2) } }, readOnly(tenantA));
    expect(ids(out.facts)).toEqual([g1.id]);
    expect(out.facts[0]!.value).toBe("80");
    expect(out.facts[0]!.validTo).toBeNull();
  });

  it("asKnownAt before the first write knows nothing; at a write's own instant it knows that write", async () => {
    expect((await memory.memories.getFacts({ ...query, asOf: { asKnownAt: ts(r1 - 1) } }, readOnly(tenantA))).facts).toEqual([]);
    expect(ids((await memory.memories.getFacts({ ...query, asOf: { asKnownAt: ts(r3 + 1) } }, readOnly(tenantA))).facts)).toEqual([g3.id]);
  });

  it("asKnownAt at a write's recordedAt as the answer shows it knows that write and what it closed, as search's asOf does", async () => {
    // recorded_at carries microseconds and the answer milliseconds: a caller who passes back the
    // instant a write was shown at must see that write, and the generation it closed as closed.
    for (const [g, at] of [
      [g1, r1],
      [g2, r2],
      [g3, r3],
    ] as const) {
      const out = await memory.memories.getFacts({ ...query, asOf: { asKnownAt: ts(at) } }, readOnly(tenantA));
      expect(ids(out.facts)).toEqual([g.id]);
      expect(out.facts[0]!.validTo).toBeNull();
    }
    // Read at the second write's instant, the first generation ends where the second begins.
    const atSecond = await memory.memories.getFacts({ ...query, asOf: { asKnownAt: ts(r2), validAt: between(r1, r2) } }, readOnly(tenantA));
    expect(ids(atSecond.facts)).toEqual([g1.id]);
    expect(ms(atSecond.facts[0]!.validTo)).toBe(r2);
  });

  it("validAt alone reads what is known now about that valid instant, closing times included", async () => {
    const first = await memory.memories.getFacts({ ...query, asOf: { validAt: between(r1, r2) } }, readOnly(tenantA));
    expect(ids(first.facts)).toEqual([g1.id]);
    expect(ms(first.facts[0]!.validTo)).toBe(r2);
    const middle = await memory.memories.getFacts({ ...query, asOf: { validAt: between(r2, r3) } }, readOnly(tenantA));
    expect(ids(middle.facts)).toEqual([g2.id]);
    expect(ms(middle.facts[0]!.validTo)).toBe(r3);
    expect((await memory.memories.getFacts({ ...query, asOf: { validAt: ts(r1 - 1) } }, readOnly(tenantA))).facts).toEqual([]);
  });

  it("validAt with asKnownAt: what we believed then about a later instant", async () => {
    // Between the 1st and 2nd writes nobody knew the value would change, so the first generation
    // was believed to hold at an instant that, as we know now, belongs to the second.
    const then = await memory.memories.getFacts({ ...query, asOf: { validAt: between(r2, r3), asKnownAt: between(r1, r2) } }, readOnly(tenantA));
    expect(ids(then.facts)).toEqual([g1.id]);
    expect(then.facts[0]!.validTo).toBeNull();
    const later = await memory.memories.getFacts({ ...query, asOf: { validAt: between(r2, r3), asKnownAt: ts(r3 + 1) } }, readOnly(tenantA));
    expect(ids(later.facts)).toEqual([g2.id]);
    expect(ms(later.facts[0]!.validTo)).toBe(r3);
  });

  it("range with no bounds returns all three generations oldest first, each ending where the next begins", async () => {
    const out = await memory.memories.getFacts({ ...query, range: {} }, readOnly(tenantA));
    expect(ids(out.facts)).toEqual([g1.id, g2.id, g3.id]);
    expect(values(out.facts)).toEqual(["80", "85", "90"]);
    expect(ms(out.facts[0]!.validTo)).toBe(ms(out.facts[1]!.validFrom));
    expect(ms(out.facts[1]!.validTo)).toBe(ms(out.facts[2]!.validFrom));
    expect(out.facts[2]!.validTo).toBeNull();
  });

  it("range bounds select the generations whose validity overlaps the window", async () => {
    const fromOnly = await memory.memories.getFacts({ ...query, range: { from: between(r2, r3) } }, readOnly(tenantA));
    expect(ids(fromOnly.facts)).toEqual([g2.id, g3.id]);
    const toOnly = await memory.memories.getFacts({ ...query, range: { to: between(r1, r2) } }, readOnly(tenantA));
    expect(ids(toOnly.facts)).toEqual([g1.id]);
    const both = await memory.memories.getFacts({ ...query, range: { from: between(r1, r2), to: between(r2, r3) } }, readOnly(tenantA));
    expect(ids(both.facts)).toEqual([g1.id, g2.id]);
    // The window is half-open: a generation that starts exactly at `to` is outside it.
    const upToSecond = await memory.memories.getFacts({ ...query, range: { to: ts(r2) } }, readOnly(tenantA));
    expect(ids(upToSecond.facts)).toEqual([g1.id]);
    // A generation that ends exactly at `from` is outside it too.
    const fromThird = await memory.memories.getFacts({ ...query, range: { from: ts(r3) } }, readOnly(tenantA));
    expect(ids(fromThird.facts)).toEqual([g3.id]);
  });
});

describe("facts with a stated valid time", () => {
  const subject = "person:bo";
  const predicate = "body.weight_kg";

  it("history in valid time is independent of when it was recorded", async () => {
    const early = await assert(tenantA, { subject, predicate, value: "70", validFrom: iso("2024-01-01T00:00:00Z") });
    const late = await assert(tenantA, { subject, predicate, value: "72", validFrom: iso("2025-01-01T00:00:00Z") });
    expect(early.validFrom && new Date(early.validFrom).toISOString()).toBe("2024-01-01T00:00:00.000Z");

    const mid2024 = await memory.memories.getFacts({ subject, predicate, asOf: { validAt: iso("2024-06-01T00:00:00Z") } }, readOnly(tenantA));
    expect(ids(mid2024.facts)).toEqual([early.id]);
    expect(new Date(mid2024.facts[0]!.validTo!).toISOString()).toBe("2025-01-01T00:00:00.000Z");
    expect((await memory.memories.getFacts({ subject, predicate, asOf: { validAt: iso("2023-06-01T00:00:00Z") } }, readOnly(tenantA))).facts).toEqual([]);
    expect(ids((await memory.memories.getFacts({ subject, predicate, asOf: { validAt: iso("2025-06-01T00:00:00Z") } }, readOnly(tenantA))).facts)).toEqual([
      late.id,
    ]);

    const window = await memory.memories.getFacts(
      { subject, predicate, range: { from: iso("2024-03-01T00:00:00Z"), to: iso("2024-09-01T00:00:00Z") } },
      readOnly(tenantA),
    );
    expect(ids(window.facts)).toEqual([early.id]);
    const since = await memory.memories.getFacts({ subject, predicate, range: { from: iso("2024-06-01T00:00:00Z") } }, readOnly(tenantA));
    expect(ids(since.facts)).toEqual([early.id, late.id]);
    const before = await memory.memories.getFacts({ subject, predicate, range: { to: iso("2023-12-31T00:00:00Z") } }, readOnly(tenantA));
    expect(before.facts).toEqual([]);
  });

  it("refuses a value older than the open generation and writes nothing from that remember", async () => {
    const memoriesBefore = await count("memories", tenantA.tenantId);
    const factsBefore = await count("facts", tenantA.tenantId);
    const err = await rejection(
      memory.memories.remember(
        {
          memoryType: "fact",
          topic: "late correction",
          content: `A correction that arrives out of order ${randomUUID()}`,
          facts: [
            { subject: "person:bo", predicate: "height_cm", value: "181" },
            { subject, predicate, value: "71", validFrom: iso("2024-06-01T00:00:00Z") },
          ],
        },
        writer(tenantA),
      ),
    );
    expect(err.reason).toBe("invalid_input");
    expect(err.details.field).toBe("facts.1.validFrom");
    expect(err.message).not.toContain("71");
    expect(await count("memories", tenantA.tenantId)).toBe(memoriesBefore);
    expect(await count("facts", tenantA.tenantId)).toBe(factsBefore);
    // The first fact of the refused call was rolled back and the open generation is untouched.
    expect((await memory.memories.getFacts({ subject, predicate: "height_cm" }, readOnly(tenantA))).facts).toEqual([]);
    expect(values((await memory.memories.getFacts({ subject, predicate }, readOnly(tenantA))).facts)).toEqual(["72"]);
  });
});

describe("listing and filtering", () => {
  it("matches subject and predicate exactly, orders by subject then predicate, and bounds the list", async () => {
    const subjects = ["list:a", "list:b"];
    await assert(tenantA, { subject: subjects[1]!, predicate: "height_cm", value: "170" });
    await assert(tenantA, { subject: subjects[0]!, predicate: "weight_kg", value: "60" });
    await assert(tenantA, { subject: subjects[0]!, predicate: "height_cm", value: "165" });

    const forA = await memory.memories.getFacts({ subject: "list:a" }, readOnly(tenantA));
    expect(forA.facts.map((f) => `${f.subject} ${f.predicate}`)).toEqual(["list:a height_cm", "list:a weight_kg"]);
    expect((await memory.memories.getFacts({ subject: "LIST:A" }, readOnly(tenantA))).facts).toEqual([]);
    expect((await memory.memories.getFacts({ subject: "list:" }, readOnly(tenantA))).facts).toEqual([]);

    const heights = await memory.memories.getFacts({ predicate: "height_cm" }, readOnly(tenantA));
    expect(heights.facts.map((f) => f.subject).filter((s) => s.startsWith("list:"))).toEqual(["list:a", "list:b"]);
    expect(heights.facts.every((f) => f.predicate === "height_cm")).toBe(true);

    // Neither subject nor predicate: every current fact of the tenant, still bounded.
    const all = await memory.memories.getFacts({}, readOnly(tenantA));
    // Grouped by subject (each subject one contiguous run), list:a before list:b, predicates in order.
    const runs = all.facts.map((f) => f.subject).filter((s, i, list) => i === 0 || list[i - 1] !== s);
    expect(new Set(runs).size).toBe(runs.length);
    expect(runs.indexOf("list:a")).toBeLessThan(runs.indexOf("list:b"));
    expect(all.facts.filter((f) => f.subject === "list:a").map((f) => f.predicate)).toEqual(["height_cm", "weight_kg"]);
    expect(all.facts.every((f) => f.validTo === null)).toBe(true);
    expect(all.facts.length).toBeGreaterThanOrEqual(4);
    expect((await memory.memories.getFacts({ limit: 2 }, readOnly(tenantA))).facts).toEqual(all.facts.slice(0, 2));
    expect((await memory.memories.getFacts({ range: {}, limit: 1 }, readOnly(tenantA))).facts).toHaveLength(1);
    expect((await memory.memories.getFacts({ asOf: { asKnownAt: new Date().toISOString() }, limit: 3 }, readOnly(tenantA))).facts).toHaveLength(3);
  });

  it("rejects bad input naming the field", async () => {
    const cases: Array<[Parameters<typeof memory.memories.getFacts>[0], string]> = [
      [{ subject: "x", asOf: { validAt: iso("2025-01-01T00:00:00Z") }, range: {} }, "range"],
      [{ subject: "x", asOf: {} }, "asOf"],
      [{ subject: "x", range: { from: iso("2025-01-02T00:00:00Z"), to: iso("2025-01-01T00:00:00Z") } }, "range.to"],
      [{ subject: "x", limit: 201 }, "limit"],
      [{ subject: "   " }, "subject"],
      [{ predicate: "p".repeat(257) }, "predicate"],
    ];
    for (const [request, field] of cases) {
      const err = await rejection(memory.memories.getFacts(request, readOnly(tenantA)));
      expect(err.reason, field).toBe("invalid_input");
      expect(err.details.field).toBe(field);
    }
    // At the ceiling is fine.
    expect((await memory.memories.getFacts({ subject: "x", limit: 200 }, readOnly(tenantA))).facts).toEqual([]);
  });

  it("needs the read scope", async () => {
    const err = await rejection(memory.memories.getFacts({}, { identity: { tenantId: tenantA.tenantId, userId: tenantA.userId, scopes: [SCOPES.write] } }));
    expect(err.reason).toBe("insufficient_scope");
  });
});

describe("tenant isolation", () => {
  it("tenant B never sees tenant A's facts, and its own writes never close A's", async () => {
    const subject = "shared:subject";
    const predicate = "temperature_c";
    const a = await assert(tenantA, { subject, predicate, value: "21" });
    await waitPastOnServer(stack.ownerPool, ms(a.recordedAt));
    const b = await assert(tenantB, { subject, predicate, value: "-4" });

    for (const [tenant, own] of [
      [tenantA, a],
      [tenantB, b],
    ] as const) {
      const modes: Array<[string, Parameters<typeof memory.memories.getFacts>[0]]> = [
        ["subject+predicate", { subject, predicate }],
        ["subject", { subject }],
        ["everything current", {}],
        ["asKnownAt", { subject, asOf: { asKnownAt: new Date(Date.now() + 60_000).toISOString() } }],
        ["validAt", { subject, asOf: { validAt: ts(ms(own.validFrom)) } }],
        ["range", { subject, range: {} }],
        ["every generation", { range: {}, limit: 200 }],
      ];
      for (const [label, request] of modes) {
        const out = await memory.memories.getFacts(request, readOnly(tenant));
        const shared = out.facts.filter((f) => f.subject === subject);
        expect(ids(shared), label).toEqual([own.id]);
      }
      const { rows } = await stack.ownerPool.query<{ tenantId: string }>(`SELECT tenant_id AS "tenantId" FROM facts WHERE id = ANY($1)`, [
        (await memory.memories.getFacts({ range: {}, limit: 200 }, readOnly(tenant))).facts.map((f) => f.id),
      ]);
      expect(new Set(rows.map((r) => r.tenantId))).toEqual(new Set([tenant.tenantId]));
    }
    // A's generation is still open: B's assertion of the same subject and predicate is B's alone.
    const { rows } = await stack.ownerPool.query("SELECT valid_to FROM facts WHERE id = $1", [a.id]);
    expect(rows).toEqual([{ valid_to: null }]);
  });
});
