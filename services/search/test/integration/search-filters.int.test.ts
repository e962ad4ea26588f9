/**
 * Search filters and ranking rules against the real memory and search services: every filter,
 * bi-temporal asOf on both axes (rows closed by a real revise, compared at server timestamps),
 * archived rows, supersession-aware ranking for supersedes and updates edges, the short-query
 * topic bonus, and the tenant's retrieval-default policy.
 */
import { MemoryType as MemoryTypeNumber } from "@3ngram/proto/common/v1/memory";
import type { MemoryType, SearchOutput } from "@3ngram/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rejection, writer } from "../../../../test/support/calls.js";
import { startCoreServices, type CoreServices, type PublicMemoryClient, type PublicSearchClient } from "../../../../test/support/core-services.js";
import { instantBetween, waitPastOnServer } from "../../../../test/support/clock.js";

type Tenant = { tenantId: string; userId: string };

let core: CoreServices;
let memory: PublicMemoryClient;
let searchClient: PublicSearchClient;

beforeAll(async () => {
  core = await startCoreServices({ label: "searchfilters" });
  memory = await core.publicMemoryClient();
  searchClient = await core.publicSearchClient();
});
afterAll(async () => {
  await core?.close();
});

type SearchArgs = Parameters<PublicSearchClient["search"]>[0];
const search = (t: Tenant, args: SearchArgs) => searchClient.search(args, writer(t));
const ids = (r: SearchOutput) => r.hits.map((h) => h.id);
const iso = (ts: string | null | undefined) => new Date(ts!).toISOString();
const ts = (isoText: string) => new Date(isoText).toISOString();

async function remember(t: Tenant, fields: { memoryType?: MemoryType; topic: string; content: string; scope?: string; project?: string }) {
  const out = await memory.memories.remember({ memoryType: "note", ...fields }, writer(t));
  return storedAt(t, out.memory!.id);
}

/** A write answers with the memory's identity only; its recorded time is read back. */
async function storedAt(t: Tenant, id: string) {
  const [read] = (await memory.memories.getMemories({ ids: [id] }, writer(t))).memories;
  return { id, recordedAt: iso(read!.recordedAt) };
}

describe("filters", () => {
  let t: Tenant;
  const m: Record<string, { id: string; recordedAt: string }> = {};

  beforeAll(async () => {
    t = await core.createTenant("filters");
    m.decision = await remember(t, { memoryType: "decision", topic: "kettle choice", content: "We bought the steel kettle for the kitchen.", project: "home" });
    await waitPastOnServer(core.ownerPool, m.decision.recordedAt);
    m.fact = await remember(t, { memoryType: "fact", topic: "kettle wattage", content: "The kitchen kettle draws 2200 watts.", project: "home" });
    await waitPastOnServer(core.ownerPool, m.fact.recordedAt);
    m.note = await remember(t, {
      memoryType: "note",
      topic: "kettle descaling",
      content: "Descale the kitchen kettle with citric acid monthly.",
      project: "chores",
    });
    await waitPastOnServer(core.ownerPool, m.note.recordedAt);
    m.work = await remember(t, { memoryType: "note", topic: "office kettle", content: "The office kitchen kettle is broken.", scope: "work" });
    await waitPastOnServer(core.ownerPool, m.work.recordedAt);
    m.loose = await remember(t, { memoryType: "preference", topic: "tea", content: "Prefers green tea brewed with a kitchen kettle at 80 degrees." });
  });

  const all = () => Object.values(m).map((x) => x.id);

  it("narrows by one type or several", async () => {
    expect(ids(await search(t, { query: "kitchen kettle", memoryTypes: ["fact"], limit: 25 }))).toEqual([m.fact!.id]);
    const several = await search(t, { query: "kitchen kettle", memoryTypes: ["fact", "decision"], limit: 25 });
    expect(ids(several).sort()).toEqual([m.fact!.id, m.decision!.id].sort());
    expect(several.coverage!.filters!.memoryTypes.sort()).toEqual(["decision", "fact"]);
    // A type no enum value names can only come from a foreign client: an unknown number.
    const raw = await core.searchClient();
    const err = await rejection(raw.search({ query: "kettle", memoryTypes: [MemoryTypeNumber.FACT, 99 as MemoryTypeNumber] }, writer(t)));
    expect(err.details.field).toBe("memoryTypes.1");
  });

  it("narrows by scope", async () => {
    expect(ids(await search(t, { query: "kitchen kettle", scope: "work", limit: 25 }))).toEqual([m.work!.id]);
    const personal = await search(t, { query: "kitchen kettle", scope: "personal", limit: 25 });
    expect(ids(personal).sort()).toEqual(
      all()
        .filter((id) => id !== m.work!.id)
        .sort(),
    );
    expect(personal.coverage!.filters!.scope).toBe("personal");
  });

  it("narrows by one project or several", async () => {
    expect(ids(await search(t, { query: "kitchen kettle", projects: ["chores"], limit: 25 }))).toEqual([m.note!.id]);
    const both = await search(t, { query: "kitchen kettle", projects: ["home", "chores"], limit: 25 });
    expect(ids(both).sort()).toEqual([m.decision!.id, m.fact!.id, m.note!.id].sort());
    expect(both.coverage!.filters!.projects.sort()).toEqual(["chores", "home"]);
    expect((await search(t, { query: "kitchen kettle", projects: ["nowhere"] })).hits).toEqual([]);
  });

  it("bounds recorded time inclusively at both ends, to the millisecond the hits show", async () => {
    const window = await search(t, { query: "kitchen kettle", recordedAfter: ts(m.fact!.recordedAt), recordedBefore: ts(m.note!.recordedAt), limit: 25 });
    expect(ids(window).sort()).toEqual([m.fact!.id, m.note!.id].sort());
    expect(iso(window.coverage!.filters!.recordedAfter)).toBe(m.fact!.recordedAt);
    const after = await search(t, { query: "kitchen kettle", recordedAfter: ts(m.work!.recordedAt), limit: 25 });
    expect(ids(after).sort()).toEqual([m.work!.id, m.loose!.id].sort());
    const before = await search(t, { query: "kitchen kettle", recordedBefore: ts(m.decision!.recordedAt), limit: 25 });
    expect(ids(before)).toEqual([m.decision!.id]);
    const reversed = await rejection(search(t, { query: "kettle", recordedAfter: ts(m.note!.recordedAt), recordedBefore: ts(m.fact!.recordedAt) }));
    expect(reversed.reason).toBe("invalid_input");
    expect(reversed.details.field).toBe("recordedBefore");
  });

  it("combines filters as one predicate in every leg", async () => {
    const result = await search(t, { query: "kitchen kettle", projects: ["home"], memoryTypes: ["decision"], scope: "personal", limit: 25 });
    expect(ids(result)).toEqual([m.decision!.id]);
    for (const leg of result.coverage!.legs) expect(leg.candidates, leg.leg).toBe(1);
  });

  it("echoes the filters it applied, active status by default", async () => {
    const result = await search(t, { query: "kitchen kettle" });
    expect(result.coverage!.filters).toMatchObject({ memoryTypes: [], projects: [], status: "active" });
    expect(result.coverage!.filters!.scope).toBeNull();
    expect(result.coverage!.order).toBe("relevance");
    expect(result.coverage!.asOf).toBeNull();
  });
});

describe("archived memories", () => {
  let t: Tenant;
  let kept: string;
  let archived: string;

  beforeAll(async () => {
    t = await core.createTenant("archived");
    kept = (await remember(t, { topic: "bike lock", content: "The bike lock code is kept in the blue notebook." })).id;
    archived = (await remember(t, { topic: "old bike lock", content: "The previous bike lock lived in the garage drawer." })).id;
    await memory.memories.archive({ memoryId: archived }, writer(t));
  });

  it("are left out by default and included when status archived is asked", async () => {
    expect(ids(await search(t, { query: "bike lock", limit: 25 }))).toEqual([kept]);
    expect(ids(await search(t, { query: "bike lock", status: "active", limit: 25 }))).toEqual([kept]);
    const asked = await search(t, { query: "bike lock", status: "archived", limit: 25 });
    expect(ids(asked)).toEqual([archived]);
    expect(asked.coverage!.filters!.status).toBe("archived");
  });

  it("are included by asOf, which lifts the active-only default", async () => {
    const now = new Date().toISOString();
    const result = await search(t, { query: "bike lock", asOf: { asKnownAt: ts(now) }, limit: 25 });
    expect(ids(result).sort()).toEqual([kept, archived].sort());
    expect(result.coverage!.filters!.status).toBeNull();
    expect(ids(await search(t, { query: "bike lock", asOf: { asKnownAt: ts(now) }, status: "active", limit: 25 }))).toEqual([kept]);
  });
});

describe("supersession-aware ranking", () => {
  let t: Tenant;

  beforeAll(async () => {
    t = await core.createTenant("supersession");
  });

  for (const edgeIntent of ["supersedes", "updates"] as const) {
    it(`ranks the predecessor of a ${edgeIntent} edge below its successor, still indexed`, async () => {
      const content = `The ${edgeIntent} release train leaves every Tuesday at nine from platform four.`;
      const predecessor = await remember(t, { topic: `${edgeIntent} release train`, content });
      const before = await search(t, { query: `${edgeIntent} release train Tuesday platform four`, limit: 25 });
      expect(ids(before)[0]).toBe(predecessor.id);

      const revised = await memory.memories.revise(
        {
          predecessorId: predecessor.id,
          edgeIntent,
          memoryType: "note",
          topic: `${edgeIntent} release train`,
          content: `The ${edgeIntent} release train moved to Thursdays.`,
        },
        writer(t),
      );
      const successor = revised.memory!.id;
      // The query still matches the predecessor's words far better, yet it ranks below its successor.
      const after = await search(t, { query: `${edgeIntent} release train Tuesday platform four`, limit: 25 });
      const order = ids(after);
      expect(order).toContain(predecessor.id);
      expect(order.indexOf(successor)).toBeLessThan(order.indexOf(predecessor.id));
      const demoted = after.hits.find((h) => h.id === predecessor.id)!;
      expect(demoted.score).toBeLessThan(0);
      expect(after.coverage!.evidence!.anyLexical).toBe(true);
    });
  }
});

describe("asOf", () => {
  let t: Tenant;
  let predecessor: { id: string; recordedAt: string };
  let successor: { id: string; recordedAt: string };
  let beforeRevise: string;
  const query = { query: "office coffee machine floor", limit: 25 };

  beforeAll(async () => {
    t = await core.createTenant("asof");
    predecessor = await remember(t, { topic: "office coffee machine", content: "The office coffee machine is on floor two, next to the lifts." });
    await waitPastOnServer(core.ownerPool, predecessor.recordedAt);
    // Learn the machine moved: the predecessor's validity closes at the revise's own instant.
    const revised = await memory.memories.revise(
      {
        predecessorId: predecessor.id,
        edgeIntent: "supersedes",
        memoryType: "note",
        topic: "office coffee machine",
        content: "The office coffee machine moved to floor three.",
      },
      writer(t),
    );
    successor = await storedAt(t, revised.memory!.id);
    beforeRevise = instantBetween(predecessor.recordedAt, successor.recordedAt);
    // The second clock: the closing write is recorded at the successor's recorded time.
    const closed = await core.ownerPool.query<{ validTo: Date; closedAt: Date }>(
      `SELECT valid_to AS "validTo", closed_recorded_at AS "closedAt" FROM memories WHERE id = $1`,
      [predecessor.id],
    );
    expect(closed.rows[0]!.closedAt.toISOString()).toBe(successor.recordedAt);
  });

  it("without asOf keeps both, the superseded one demoted", async () => {
    const result = await search(t, query);
    expect(ids(result)).toEqual([successor.id, predecessor.id]);
  });

  it("asKnownAt before the revise sees only what was recorded then, with no successor to demote it", async () => {
    const result = await search(t, { ...query, asOf: { asKnownAt: ts(beforeRevise) } });
    expect(ids(result)).toEqual([predecessor.id]);
    expect(result.hits[0]!.score).toBeGreaterThan(0);
    expect(iso(result.coverage!.asOf!.asKnownAt)).toBe(beforeRevise);
  });

  it("asKnownAt at the revise's recorded instant sees both, the predecessor demoted", async () => {
    const result = await search(t, { ...query, asOf: { asKnownAt: ts(successor.recordedAt) } });
    expect(ids(result)).toEqual([successor.id, predecessor.id]);
    expect(result.hits[1]!.score).toBeLessThan(0);
  });

  it("validAt before the revise answers what was true then", async () => {
    const result = await search(t, { ...query, asOf: { validAt: ts(beforeRevise) } });
    expect(ids(result)).toEqual([predecessor.id]);
    expect(result.hits[0]!.score).toBeGreaterThan(0);
  });

  it("validAt after the revise answers what is true now", async () => {
    const result = await search(t, { ...query, asOf: { validAt: ts(successor.recordedAt) } });
    expect(ids(result)).toEqual([successor.id]);
  });

  it("validAt now as known before the revise: the closing write was not known yet", async () => {
    const now = new Date().toISOString();
    const result = await search(t, { ...query, asOf: { validAt: ts(now), asKnownAt: ts(beforeRevise) } });
    expect(ids(result)).toEqual([predecessor.id]);
  });

  it("validAt now as known after the revise: only the successor", async () => {
    const now = new Date().toISOString();
    const result = await search(t, { ...query, asOf: { validAt: ts(now), asKnownAt: ts(now) } });
    expect(ids(result)).toEqual([successor.id]);
  });

  it("validAt before the revise as known after it: still the predecessor", async () => {
    const now = new Date().toISOString();
    const result = await search(t, { ...query, asOf: { validAt: ts(beforeRevise), asKnownAt: ts(now) } });
    expect(ids(result)).toEqual([predecessor.id]);
  });

  it("refuses an empty asOf", async () => {
    const err = await rejection(search(t, { ...query, asOf: {} }));
    expect(err.details.field).toBe("asOf");
  });
});

describe("short-query topic bonus", () => {
  let t: Tenant;
  let named: string;
  let mentioned: string;
  let wildcard: string;
  let lookalike: string;

  beforeAll(async () => {
    t = await core.createTenant("shortquery");
    named = (await remember(t, { memoryType: "fact", topic: "Zephyrine", content: "Leads the billing squad and reviews every pricing change." })).id;
    mentioned = (await remember(t, { topic: "pricing review", content: "Zephyrine approved the pricing review for the spring plans." })).id;
    wildcard = (await remember(t, { topic: "discount 5_0", content: "Spring promotion codes for resellers." })).id;
    lookalike = (await remember(t, { topic: "discount 500", content: "Volume pricing for large resellers." })).id;
  });

  it("lifts the memory whose topic contains a one- or two-word query", async () => {
    const result = await search(t, { query: "zephyrine", limit: 25 });
    expect(ids(result).slice(0, 2)).toEqual([named, mentioned]);
    const [first, second] = result.hits;
    // The bonus (0.5) is what separates them: the mention matches the word as well.
    expect(first!.score - second!.score).toBeGreaterThan(0.3);
  });

  it("does not apply to longer queries", async () => {
    const long = (await search(t, { query: "who is zephyrine anyway", limit: 25 })).hits.find((h) => h.id === named)!;
    const short = (await search(t, { query: "zephyrine", limit: 25 })).hits.find((h) => h.id === named)!;
    expect(short.score - long.score).toBeGreaterThan(0.3);
  });

  it("treats LIKE wildcards in the query literally", async () => {
    // Every other part of the score weighs nothing here, so a hit's score is its bonus alone: the
    // legs' share depends on the fusion (reciprocal rank gives any candidate about half a point).
    const bonusOnly = await core.searchClientWithPolicy({ weights: { vector: 0, fts: 0, recency: 0 }, shortQueryFusion: "same" });
    const result = await bonusOnly.search({ query: "5_0", limit: 25 }, writer(t));
    const score = (id: string) => result.hits.find((h) => h.id === id)?.score ?? Number.NEGATIVE_INFINITY;
    expect(score(wildcard)).toBeCloseTo(0.5, 6);
    // "_" would match any character if it were not escaped, giving "discount 500" the bonus too.
    expect(score(lookalike)).toBeCloseTo(0, 6);
  });
});

describe("retrieval-default policy", () => {
  let t: Tenant;
  let personal: string;
  let work: string;

  beforeAll(async () => {
    t = await core.createTenant("policy");
    personal = (await remember(t, { topic: "standup time", content: "Family standup call happens at eight every Sunday." })).id;
    work = (await remember(t, { topic: "standup time", content: "Team standup happens at ten every weekday.", scope: "work" })).id;
  });

  it("off: an unscoped search sees every scope and applies none", async () => {
    await memory.scopes.setRetrievalDefault({ mode: "off" }, writer(t));
    const result = await search(t, { query: "standup", limit: 25 });
    expect(ids(result).sort()).toEqual([personal, work].sort());
    expect(result.coverage!.appliedScope).toBeNull();
  });

  it("default: an unscoped search is narrowed to the default scope and says so; an explicit scope wins", async () => {
    await memory.scopes.setRetrievalDefault({ mode: "default", scope: "work" }, writer(t));
    const narrowed = await search(t, { query: "standup", limit: 25 });
    expect(ids(narrowed)).toEqual([work]);
    expect(narrowed.coverage!.appliedScope).toBe("work");
    expect(narrowed.coverage!.filters!.scope).toBe("work");
    const explicit = await search(t, { query: "standup", scope: "personal", limit: 25 });
    expect(ids(explicit)).toEqual([personal]);
    expect(explicit.coverage!.appliedScope).toBeNull();
    // The chronological listing follows the same policy.
    const listed = await search(t, { order: "chronological", memoryTypes: ["note"], limit: 25 });
    expect(ids(listed)).toEqual([work]);
    expect(listed.coverage!.appliedScope).toBe("work");
  });

  it("a cursor issued under one default is refused after the default changes", async () => {
    for (let i = 0; i < 6; i++) await remember(t, { topic: `standup note ${i}`, content: `Standup note number ${i} for the team.`, scope: "work" });
    await memory.scopes.setRetrievalDefault({ mode: "default", scope: "work" }, writer(t));
    const first = await search(t, { query: "standup", limit: 2 });
    expect(first.nextCursor).toBeDefined();
    await memory.scopes.setRetrievalDefault({ mode: "default", scope: "personal" }, writer(t));
    const err = await rejection(search(t, { query: "standup", limit: 2, cursor: first.nextCursor! }));
    expect(err.details.field).toBe("cursor");
  });

  it("require: an unscoped search is refused naming the registered scopes; an explicit scope passes", async () => {
    await memory.scopes.setRetrievalDefault({ mode: "require" }, writer(t));
    const err = await rejection(search(t, { query: "standup" }));
    expect(err.reason).toBe("invalid_input");
    expect(err.details.field).toBe("scope");
    expect(err.message).toContain("personal, work");
    expect(err.message).not.toContain("standup");
    expect(ids(await search(t, { query: "standup", scope: "personal", limit: 25 }))).toEqual([personal]);
  });

  it("require lists at most eight scopes and counts the rest", async () => {
    for (let i = 0; i < 9; i++) await memory.scopes.createScope({ name: `area-${i}`, aliases: [] }, writer(t));
    const err = await rejection(search(t, { query: "standup" }));
    // 11 registered: area-0 … area-8, personal, work.
    expect(err.message).toContain("area-0, area-1, area-2, area-3, area-4, area-5, area-6, area-7 (+3 more)");
    await memory.scopes.setRetrievalDefault({ mode: "off" }, writer(t));
  });
});
