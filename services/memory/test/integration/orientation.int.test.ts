/**
 * Orientation reads through the real memory service over gRPC on a fresh PostgreSQL database:
 * briefing (every selector kind, section subsets, exact counts and hasMore, modes and limits,
 * overdue commitments, stale candidates, the retrieval default), handoff (bounds, counts,
 * excerpts) and describe_environment (counts after known writes, queues and the dead-letter view
 * on the real Redis queue), with tenant isolation throughout. Backdated rows come from the import
 * RPC, which keeps recordedAt.
 */
import { randomUUID } from "node:crypto";
import type { ArchiveService, BriefingMode, memoryServices } from "@3ngram/proto/memory/v1";
import { PermanentJobError, UnavailableJobError, createRedisQueueBackend, type QueueBackend } from "@3ngram/queue";
import { SCOPES, type RpcClients, type RpcMethods } from "@3ngram/rpc";
import {
  BRIEFING_SECTIONS,
  COMMITMENT_STATUSES,
  EMBEDDINGS_QUEUE,
  MAX_EXCERPT_LENGTH,
  MEMORY_TYPES,
  type BriefingOutput,
  type CommitmentSection,
  type MemorySection,
} from "@3ngram/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reader, rejection, writer, type TestTenant } from "../../../../test/support/calls.js";
import { startCoreServices, type CoreServices, type PublicMemoryClient } from "../../../../test/support/core-services.js";
import { importFile } from "../../../../test/support/archive.js";
import { TEST_REDIS_URL } from "../../../../test/support/database.js";
import { eventually } from "../../../../test/support/processes.js";

type RememberInit = Parameters<PublicMemoryClient["memories"]["remember"]>[0];
type BriefingInit = Parameters<PublicMemoryClient["orientation"]["briefing"]>[0];
type HandoffInit = Parameters<PublicMemoryClient["orientation"]["handoff"]>[0];

const DAY_MS = 24 * 60 * 60 * 1000;
const SECTION_FIELDS = ["commitments", "overdue", "blockers", "staleCandidates", "recentDecisions", "preferences"] as const;

let stack: CoreServices;
let memory: PublicMemoryClient;
/** Proto messages as they are, for what a public value cannot say (a number no enum holds). */
let raw: RpcClients<typeof memoryServices>;
let archiveRpc: RpcMethods<typeof ArchiveService>;

let seq = 0;
/** Unique content, so the live-duplicate guard never trips by accident. */
const unique = (label: string) => `${label} ${randomUUID()} #${++seq}`;

async function remember(t: TestTenant, fields: Partial<RememberInit> & Pick<RememberInit, "memoryType">): Promise<string> {
  const stored = await memory.memories.remember(
    { topic: `${fields.memoryType} topic`, content: unique(fields.memoryType), ...fields } as RememberInit,
    writer(t),
  );
  return stored.memory!.id;
}

const briefing = (t: TestTenant, request: BriefingInit) => memory.orientation.briefing(request, reader(t));
const handoff = (t: TestTenant, request: HandoffInit) => memory.orientation.handoff(request, reader(t));
const ids = (s: MemorySection | CommitmentSection | undefined) => (s?.items ?? []).map((i) => i.id);
const memoryIds = (s: CommitmentSection | undefined) => (s?.items ?? []).map((i) => i.memoryId);
const sorted = (values: readonly string[]) => [...values].sort();

/** The sections a response carries, by name. */
const present = (res: BriefingOutput) => SECTION_FIELDS.filter((name) => res[name] !== undefined);

function ndjson(records: readonly unknown[]): string {
  return records.map((r) => JSON.stringify(r)).join("\n") + "\n";
}

/** Imports memory records (recordedAt kept) and returns their new ids, in order. */
async function importMemories(t: TestTenant, records: ReadonlyArray<Record<string, unknown>>): Promise<string[]> {
  const file = ndjson(
    records.map((r) => ({ kind: "memory", key: randomUUID(), topic: `${String(r.memoryType)} imported`, content: unique("imported"), ...r })),
  );
  const result = await importFile(archiveRpc, { format: "3ngram", ndjson: file }, writer(t));
  expect(result.results.map((r) => r.outcome)).toEqual(records.map(() => "created"));
  return result.results.map((r) => r.id!);
}

const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS).toISOString();

beforeAll(async () => {
  stack = await startCoreServices({ label: "orientation" });
  memory = await stack.publicMemoryClient();
  raw = await stack.memoryClient();
  archiveRpc = raw.archive;
});
afterAll(async () => {
  await stack?.close();
});

describe("briefing selectors", () => {
  let t: TestTenant;
  const d: Record<string, string> = {};

  beforeAll(async () => {
    t = await stack.createTenant("briefing selectors");
    d.workAtlas = await remember(t, { memoryType: "decision", scope: "work", project: "atlas" });
    d.work = await remember(t, { memoryType: "decision", scope: "work" });
    d.personalAtlas = await remember(t, { memoryType: "decision", scope: "personal", project: "atlas" });
    d.personal = await remember(t, { memoryType: "decision", scope: "personal" });
    d.workZeus = await remember(t, { memoryType: "decision", scope: "work", project: "zeus" });
  });

  const decisions = async (selector: BriefingInit["selector"]) => {
    const res = await briefing(t, { selector, sections: ["recentDecisions"], sectionLimit: 100 });
    return { res, ids: sorted(ids(res.recentDecisions)), count: res.recentDecisions!.count };
  };

  it("all covers every live memory", async () => {
    const { res, ids: got, count } = await decisions({ kind: "all" });
    expect(got).toEqual(sorted(Object.values(d)));
    expect(count).toBe(5);
    expect(res.selector).toMatchObject({ kind: "all" });
    expect(res.appliedScope).toBeUndefined();
  });

  it("scope narrows to the scope, whatever the project", async () => {
    const { res, ids: got } = await decisions({ kind: "scope", scope: "work" });
    expect(got).toEqual(sorted([d.workAtlas!, d.work!, d.workZeus!]));
    expect(res.selector).toMatchObject({ kind: "scope", scope: "work" });
  });

  it("project never matches memories without a project", async () => {
    const { ids: got } = await decisions({ kind: "project", project: "atlas" });
    expect(got).toEqual(sorted([d.workAtlas!, d.personalAtlas!]));
  });

  it("scope_project is the intersection; includeUnscoped adds the scope's project-less memories", async () => {
    const narrow = await decisions({ kind: "scope_project", scope: "work", project: "atlas" });
    expect(narrow.ids).toEqual([d.workAtlas]);
    expect(narrow.res.selector).toMatchObject({ kind: "scope_project", scope: "work", project: "atlas", includeUnscoped: false });
    const wide = await decisions({ kind: "scope_project", scope: "work", project: "atlas", includeUnscoped: true });
    expect(wide.ids).toEqual(sorted([d.workAtlas!, d.work!]));
    expect(wide.res.selector?.includeUnscoped).toBe(true);
  });

  it("a scope alias selects the scope's memories", async () => {
    await memory.scopes.setScopeAliases({ name: "work", aliases: ["job"] }, writer(t));
    const { ids: got } = await decisions({ kind: "scope", scope: "job" });
    expect(got).toEqual(sorted([d.workAtlas!, d.work!, d.workZeus!]));
    const mixed = await decisions({ kind: "scope_project", scope: "job", project: "zeus" });
    expect(mixed.ids).toEqual([d.workZeus]);
  });

  it("superseded and archived memories are not live and never appear", async () => {
    const old = await remember(t, { memoryType: "decision", scope: "work", project: "atlas" });
    const revised = await memory.memories.revise(
      {
        predecessorId: old,
        memoryType: "decision",
        topic: "revised",
        content: unique("revised"),
        scope: "work",
        project: "atlas",
        tags: [],
        facts: [],
      },
      writer(t),
    );
    const archived = await remember(t, { memoryType: "decision", scope: "work", project: "atlas" });
    await memory.memories.archive({ memoryId: archived }, writer(t));
    const { ids: got } = await decisions({ kind: "scope_project", scope: "work", project: "atlas" });
    expect(got).toEqual(sorted([d.workAtlas!, revised.memory!.id]));
  });

  it("refuses a missing selector, a selector of no kind, and a kind without its fields", async () => {
    // Over gRPC the oneof holds exactly one kind with only its own fields, so an unknown kind or a
    // field of another kind cannot be sent at all (the MCP and REST inputs refuse those by name).
    for (const [request, field] of [
      [{}, /^selector/],
      [{ selector: {} }, /^selector\.kind/],
      [{ selector: { kind: { case: "scope", value: {} } } }, /^selector\.scope/],
      [{ selector: { kind: { case: "scope", value: { scope: "Not Kebab" } } } }, /^selector\.scope/],
    ] as const) {
      const err = await rejection(raw.orientation.briefing(request, reader(t)));
      expect(err.reason, JSON.stringify(request)).toBe("invalid_input");
      expect(err.message, JSON.stringify(request)).toMatch(field);
    }
  });
});

describe("briefing sections, counts and limits", () => {
  let t: TestTenant;
  const blockers: string[] = [];

  beforeAll(async () => {
    t = await stack.createTenant("briefing counts");
    // Seven blockers, newest last; two preferences; one decision; one open commitment.
    for (let i = 0; i < 7; i++) blockers.push(await remember(t, { memoryType: "blocker", topic: `blocker ${i}` }));
    await remember(t, { memoryType: "preference" });
    await remember(t, { memoryType: "preference" });
    await remember(t, { memoryType: "decision" });
    await remember(t, { memoryType: "commitment" });
  });

  const newestFirst = () => [...blockers].reverse();

  it("brief mode is the default: three items per section, exact counts, hasMore", async () => {
    const res = await briefing(t, { selector: { kind: "all" } });
    expect(res.mode).toBe("brief");
    expect(res.sectionLimit).toBe(3);
    expect(present(res)).toEqual([...SECTION_FIELDS]);
    expect(res.blockers).toMatchObject({ count: 7, hasMore: true });
    expect(ids(res.blockers)).toEqual(newestFirst().slice(0, 3));
    expect(res.preferences).toMatchObject({ count: 2, hasMore: false });
    expect(res.preferences!.items).toHaveLength(2);
    expect(res.recentDecisions).toMatchObject({ count: 1, hasMore: false });
    expect(res.commitments).toMatchObject({ count: 1, hasMore: false });
    expect(res.overdue).toMatchObject({ count: 0, hasMore: false, items: [] });
    expect(res.staleCandidates).toMatchObject({ count: 0, hasMore: false, items: [] });
  });

  it("full mode shows up to 25; sectionLimit overrides either mode", async () => {
    const full = await briefing(t, { selector: { kind: "all" }, mode: "full" });
    expect(full.sectionLimit).toBe(25);
    expect(full.blockers).toMatchObject({ count: 7, hasMore: false });
    expect(ids(full.blockers)).toEqual(newestFirst());
    const five = await briefing(t, { selector: { kind: "all" }, mode: "full", sectionLimit: 5 });
    expect(five.sectionLimit).toBe(5);
    expect(five.blockers).toMatchObject({ count: 7, hasMore: true });
    expect(ids(five.blockers)).toEqual(newestFirst().slice(0, 5));
    const exact = await briefing(t, { selector: { kind: "all" }, sectionLimit: 7 });
    expect(exact.blockers).toMatchObject({ count: 7, hasMore: false });
    const one = await briefing(t, { selector: { kind: "all" }, mode: "brief", sectionLimit: 1 });
    expect(ids(one.blockers)).toEqual([newestFirst()[0]]);
  });

  it("answers only the requested sections; the others are absent, not empty", async () => {
    const res = await briefing(t, { selector: { kind: "all" }, sections: ["preferences", "blockers"] });
    expect(present(res)).toEqual(["blockers", "preferences"]);
    const single = await briefing(t, { selector: { kind: "all" }, sections: ["overdue"] });
    expect(present(single)).toEqual(["overdue"]);
  });

  it("items carry metadata only, never content", async () => {
    const res = await briefing(t, { selector: { kind: "all" }, mode: "full" });
    for (const name of SECTION_FIELDS) {
      for (const item of res[name]!.items) expect(Object.keys(item)).not.toContain("content");
    }
    const blocker = res.blockers!.items[0]!;
    expect(blocker).toMatchObject({ memoryType: "blocker", topic: "blocker 6", scope: "personal" });
    expect(blocker.project).toBeNull();
    expect(Date.parse(blocker.recordedAt)).toBeLessThanOrEqual(Date.parse(res.generatedAt));
  });

  it("refuses bad modes, limits and section lists", async () => {
    // A mode no enum value names can only come from a foreign client: an unknown number.
    const verbose = await rejection(raw.orientation.briefing({ selector: { kind: { case: "all", value: {} } }, mode: 99 as BriefingMode }, reader(t)));
    expect(verbose.details.field).toBe("mode");
    for (const [request, field] of [
      [{ sectionLimit: 0 }, "sectionLimit"],
      [{ sectionLimit: 101 }, "sectionLimit"],
      [{ sections: ["blockers", "blockers"] }, "sections"],
      [{ sections: ["gossip"] }, "sections.0"],
    ] as const) {
      const err = await rejection(briefing(t, { selector: { kind: "all" }, ...request } as BriefingInit));
      expect(err.reason, JSON.stringify(request)).toBe("invalid_input");
      expect(err.details.field, JSON.stringify(request)).toBe(field);
    }
  });

  it("another tenant's briefing counts none of these rows", async () => {
    const other = await stack.createTenant("briefing counts other");
    const res = await briefing(other, { selector: { kind: "all" }, mode: "full" });
    for (const name of SECTION_FIELDS) expect(res[name], name).toMatchObject({ count: 0, hasMore: false, items: [] });
  });
});

describe("commitments and overdue", () => {
  let t: TestTenant;
  const c: Record<string, string> = {};

  beforeAll(async () => {
    t = await stack.createTenant("briefing commitments");
    const at = (ms: number) => new Date(ms).toISOString();
    c.pastDue = await remember(t, { memoryType: "commitment", topic: "past due", dueAt: at(Date.now() - 2 * DAY_MS), owner: "sam" });
    c.olderPastDue = await remember(t, { memoryType: "commitment", topic: "older past due", dueAt: at(Date.now() - 5 * DAY_MS) });
    c.future = await remember(t, { memoryType: "commitment", topic: "next month", dueAt: at(Date.now() + 30 * DAY_MS) });
    c.undated = await remember(t, { memoryType: "commitment", topic: "someday" });
    c.waiting = await remember(t, { memoryType: "commitment", topic: "waiting on review", dueAt: at(Date.now() - DAY_MS) });
    await memory.memories.resolve({ memoryId: c.waiting, status: "waiting" }, writer(t));
    const resolved = await remember(t, { memoryType: "commitment", topic: "done already", dueAt: at(Date.now() - 3 * DAY_MS) });
    await memory.memories.resolve({ memoryId: resolved, status: "resolved" }, writer(t));
    // Due a moment from now: not overdue yet when it is written.
    c.soon = await remember(t, { memoryType: "commitment", topic: "due in a moment", dueAt: at(Date.now() + 1_500) });
  });

  it("lists open and waiting commitments of live memories, most pressing first", async () => {
    const res = await briefing(t, { selector: { kind: "all" }, sections: ["commitments"], mode: "full" });
    // Surfacing time (= due date when written) ascending, undated last; resolved ones never.
    const order = memoryIds(res.commitments);
    expect(order.slice(0, 3)).toEqual([c.olderPastDue, c.pastDue, c.waiting]);
    expect(order.at(-1)).toBe(c.undated);
    expect(sorted(order)).toEqual(sorted(Object.values(c)));
    const first = res.commitments!.items.find((i) => i.memoryId === c.pastDue)!;
    expect(first).toMatchObject({ topic: "past due", status: "open", owner: "sam", overdue: true });
    const undated = res.commitments!.items.find((i) => i.memoryId === c.undated)!;
    expect(undated.dueAt).toBeNull();
    expect(undated.overdue).toBe(false);
    expect(res.commitments!.items.find((i) => i.memoryId === c.waiting)!.status).toBe("waiting");
  });

  it("a commitment becomes overdue once its due time passes", async () => {
    await eventually(async () => {
      const res = await briefing(t, { selector: { kind: "all" }, sections: ["overdue"], mode: "full" });
      expect(memoryIds(res.overdue)).toContain(c.soon);
    });
    const res = await briefing(t, { selector: { kind: "all" }, sections: ["overdue", "commitments"], mode: "full" });
    // Earliest due first.
    expect(memoryIds(res.overdue)).toEqual([c.olderPastDue, c.pastDue, c.waiting, c.soon]);
    expect(res.overdue).toMatchObject({ count: 4, hasMore: false });
    expect(res.commitments!.items.find((i) => i.memoryId === c.soon)!.overdue).toBe(true);
  });

  it("counts overdue commitments beyond the commitments section's limit", async () => {
    const res = await briefing(t, { selector: { kind: "all" }, sections: ["commitments", "overdue"], sectionLimit: 1 });
    expect(res.commitments).toMatchObject({ count: 6, hasMore: true });
    expect(res.overdue).toMatchObject({ count: 4, hasMore: true });
    expect(res.overdue!.items).toHaveLength(1);
  });

  it("a revised commitment shows once, through its successor", async () => {
    const revised = await memory.memories.revise(
      { predecessorId: c.future!, memoryType: "commitment", topic: "next month (moved)", content: unique("moved"), tags: [], facts: [] },
      writer(t),
    );
    const res = await briefing(t, { selector: { kind: "all" }, sections: ["commitments"], mode: "full" });
    expect(res.commitments!.count).toBe(6);
    expect(memoryIds(res.commitments)).toContain(revised.memory!.id);
    expect(memoryIds(res.commitments)).not.toContain(c.future);
    c.future = revised.memory!.id;
  });

  it("sections that overlap agree: overdue flags in commitments match the overdue section", async () => {
    const res = await briefing(t, { selector: { kind: "all" }, sections: ["commitments", "overdue"], mode: "full" });
    const flagged = res.commitments!.items.filter((i) => i.overdue).map((i) => i.id);
    expect(sorted(flagged)).toEqual(sorted(ids(res.overdue)));
    expect(res.overdue!.count).toBe(flagged.length);
  });
});

describe("stale candidates", () => {
  let t: TestTenant;
  let stale: string[];

  beforeAll(async () => {
    t = await stack.createTenant("briefing stale");
    stale = await importMemories(t, [
      { memoryType: "decision", recordedAt: daysAgo(90), validFrom: daysAgo(90) },
      { memoryType: "fact", recordedAt: daysAgo(60), validFrom: daysAgo(60), scope: "work" },
      { memoryType: "preference", recordedAt: daysAgo(45), validFrom: daysAgo(45) },
      { memoryType: "blocker", recordedAt: daysAgo(31), validFrom: daysAgo(31), project: "atlas" },
    ]);
    // Old but not of a stale-candidate type, recent, or no longer live: none of these qualify.
    await importMemories(t, [
      { memoryType: "note", recordedAt: daysAgo(120), validFrom: daysAgo(120) },
      { memoryType: "commitment", recordedAt: daysAgo(120), validFrom: daysAgo(120) },
      { memoryType: "pattern", recordedAt: daysAgo(120), validFrom: daysAgo(120) },
      { memoryType: "event", recordedAt: daysAgo(120), validFrom: daysAgo(120) },
      { memoryType: "decision", recordedAt: daysAgo(29), validFrom: daysAgo(29) },
      { memoryType: "decision", recordedAt: daysAgo(200), validFrom: daysAgo(200), status: "archived" },
    ]);
    await remember(t, { memoryType: "decision" });
  });

  it("lists live decisions, preferences, blockers and facts untouched for 30 days, oldest first", async () => {
    const res = await briefing(t, { selector: { kind: "all" }, sections: ["staleCandidates"], mode: "full" });
    expect(ids(res.staleCandidates)).toEqual(stale);
    expect(res.staleCandidates).toMatchObject({ count: 4, hasMore: false });
    expect(res.staleCandidates!.items.map((i) => i.memoryType)).toEqual(["decision", "fact", "preference", "blocker"]);
  });

  it("is bounded and narrowed like every section", async () => {
    const brief = await briefing(t, { selector: { kind: "all" }, sections: ["staleCandidates"], sectionLimit: 2 });
    expect(ids(brief.staleCandidates)).toEqual(stale.slice(0, 2));
    expect(brief.staleCandidates).toMatchObject({ count: 4, hasMore: true });
    const work = await briefing(t, { selector: { kind: "scope", scope: "work" }, sections: ["staleCandidates"] });
    expect(ids(work.staleCandidates)).toEqual([stale[1]]);
    const atlas = await briefing(t, { selector: { kind: "project", project: "atlas" }, sections: ["staleCandidates"] });
    expect(ids(atlas.staleCandidates)).toEqual([stale[3]]);
  });

  it("a stale memory revised today leaves the list (its successor is new)", async () => {
    await memory.memories.revise(
      { predecessorId: stale[0]!, memoryType: "decision", topic: "reconfirmed", content: unique("reconfirmed"), tags: [], facts: [] },
      writer(t),
    );
    const res = await briefing(t, { selector: { kind: "all" }, sections: ["staleCandidates"] });
    expect(ids(res.staleCandidates)).toEqual(stale.slice(1));
  });
});

describe("snapshot consistency", () => {
  it("sections and their counts agree while writes land concurrently", async () => {
    const t = await stack.createTenant("briefing snapshot");
    const past = new Date(Date.now() - DAY_MS).toISOString();
    const writes = Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? remember(t, { memoryType: "commitment", dueAt: past }) : remember(t, { memoryType: "decision" }))),
    );
    const reads: BriefingOutput[] = [];
    let done = false;
    const finish = () => {
      done = true;
    };
    writes.then(finish, finish);
    while (!done) reads.push(await briefing(t, { selector: { kind: "all" }, sections: ["commitments", "overdue", "recentDecisions"], sectionLimit: 100 }));
    await writes;
    reads.push(await briefing(t, { selector: { kind: "all" }, sections: ["commitments", "overdue", "recentDecisions"], sectionLimit: 100 }));
    for (const res of reads) {
      // Every commitment here is overdue, so the two sections must name exactly the same rows.
      expect(res.commitments!.count).toBe(res.overdue!.count);
      expect(sorted(ids(res.commitments))).toEqual(sorted(ids(res.overdue)));
      expect(res.commitments!.items).toHaveLength(res.commitments!.count);
      expect(res.recentDecisions!.items).toHaveLength(res.recentDecisions!.count);
    }
    expect(reads.at(-1)!.commitments!.count).toBe(15);
    expect(reads.at(-1)!.recentDecisions!.count).toBe(15);
  });
});

describe("retrieval default", () => {
  let t: TestTenant;
  let work: string;
  let personal: string;

  beforeAll(async () => {
    t = await stack.createTenant("briefing policy");
    work = await remember(t, { memoryType: "blocker", scope: "work" });
    personal = await remember(t, { memoryType: "blocker", scope: "personal" });
  });

  it("off: all is all", async () => {
    const res = await briefing(t, { selector: { kind: "all" }, sections: ["blockers"] });
    expect(sorted(ids(res.blockers))).toEqual(sorted([work, personal]));
    expect(res.appliedScope).toBeUndefined();
  });

  it("default narrows all to the default scope and says so; an explicit selector wins", async () => {
    await memory.scopes.setRetrievalDefault({ mode: "default", scope: "work" }, writer(t));
    const res = await briefing(t, { selector: { kind: "all" }, sections: ["blockers"] });
    expect(ids(res.blockers)).toEqual([work]);
    expect(res.appliedScope).toBe("work");
    expect(res.selector).toMatchObject({ kind: "scope", scope: "work" });
    const explicit = await briefing(t, { selector: { kind: "scope", scope: "personal" }, sections: ["blockers"] });
    expect(ids(explicit.blockers)).toEqual([personal]);
    expect(explicit.appliedScope).toBeUndefined();
    const out = await handoff(t, { selector: { kind: "all" } });
    expect(out.appliedScope).toBe("work");
    expect(out.blockers.map((b) => b.id)).toEqual([work]);
  });

  it("require refuses all and names the registered scopes; other selectors still work", async () => {
    await memory.scopes.setRetrievalDefault({ mode: "require" }, writer(t));
    const err = await rejection(briefing(t, { selector: { kind: "all" } }));
    expect(err.reason).toBe("invalid_input");
    expect(err.details.field).toBe("selector.kind");
    expect(err.message).toMatch(/personal, work/);
    const handoffErr = await rejection(handoff(t, { selector: { kind: "all" } }));
    expect(handoffErr.details.field).toBe("selector.kind");
    const res = await briefing(t, { selector: { kind: "scope", scope: "personal" }, sections: ["blockers"] });
    expect(ids(res.blockers)).toEqual([personal]);
    await memory.scopes.setRetrievalDefault({ mode: "off" }, writer(t));
  });
});

describe("handoff", () => {
  let t: TestTenant;
  const long = "x".repeat(1_990) + " tail";
  const wide = "😀".repeat(700);
  let longId: string;
  let wideId: string;
  let shortId: string;

  beforeAll(async () => {
    t = await stack.createTenant("handoff");
    longId = await remember(t, { memoryType: "decision", content: long });
    wideId = await remember(t, { memoryType: "decision", content: wide });
    shortId = await remember(t, { memoryType: "decision", content: "Use short ids in logs." });
    await remember(t, { memoryType: "preference", content: "Prefers tabs." });
    await remember(t, { memoryType: "blocker", content: "Waiting for credentials." });
    await remember(t, { memoryType: "commitment", content: "Ship the report.", dueAt: new Date(Date.now() - DAY_MS).toISOString(), owner: "ana" });
    await remember(t, { memoryType: "note", content: "Notes are not handed off." });
  });

  it("exports decisions, commitments, preferences and blockers with excerpts and exact counts", async () => {
    const out = await handoff(t, { selector: { kind: "all" }, generatedFor: "codex" });
    expect(out.generatedFor).toBe("codex");
    expect(out.sectionLimit).toBe(25);
    expect(out.decisions.map((d) => d.id)).toEqual([shortId, wideId, longId]);
    expect(out.counts).toMatchObject({ decisions: 3, commitments: 1, preferences: 1, blockers: 1 });
    expect(out.truncated).toMatchObject({ decisions: false, commitments: false, preferences: false, blockers: false });
    const [short, emoji, cut] = out.decisions;
    expect(short).toMatchObject({ content: "Use short ids in logs.", contentLength: 22, truncated: false, memoryType: "decision" });
    expect(cut!.content.length).toBeLessThanOrEqual(MAX_EXCERPT_LENGTH);
    expect(cut!.content.endsWith("…")).toBe(true);
    expect(long.startsWith(cut!.content.slice(0, -1))).toBe(true);
    expect(cut).toMatchObject({ contentLength: long.length, truncated: true });
    // Lengths count UTF-16 code units, like every other bound; a surrogate pair is never split.
    expect(emoji).toMatchObject({ contentLength: wide.length, truncated: true });
    expect(emoji!.content.length).toBeLessThanOrEqual(MAX_EXCERPT_LENGTH);
    expect(wide.startsWith(emoji!.content.slice(0, -1))).toBe(true);
    expect(out.commitments[0]).toMatchObject({ content: "Ship the report.", status: "open", owner: "ana", overdue: true, truncated: false });
    expect(out.preferences[0]!.content).toBe("Prefers tabs.");
    expect(out.blockers[0]!.content).toBe("Waiting for credentials.");
  });

  it("sectionLimit bounds every section and flags the cut ones", async () => {
    const out = await handoff(t, { selector: { kind: "all" }, sectionLimit: 2 });
    expect(out.decisions.map((d) => d.id)).toEqual([shortId, wideId]);
    expect(out.counts!.decisions).toBe(3);
    expect(out.truncated).toMatchObject({ decisions: true, commitments: false, preferences: false, blockers: false });
    expect(out.generatedFor).toBeNull();
  });

  it("refuses unbounded or oversized requests", async () => {
    for (const [request, field] of [
      [{ selector: { kind: "all" }, sectionLimit: 101 }, "sectionLimit"],
      [{ selector: { kind: "all" }, sectionLimit: 0 }, "sectionLimit"],
      [{ selector: { kind: "all" }, generatedFor: "x".repeat(257) }, "generatedFor"],
      [{ selector: { kind: "all" }, generatedFor: "   " }, "generatedFor"],
    ] as const) {
      const err = await rejection(handoff(t, request as HandoffInit));
      expect(err.details.field, JSON.stringify(request).slice(0, 80)).toBe(field);
    }
  });

  it("another tenant's handoff is empty", async () => {
    const other = await stack.createTenant("handoff other");
    const out = await handoff(other, { selector: { kind: "all" } });
    expect(out.counts).toMatchObject({ decisions: 0, commitments: 0, preferences: 0, blockers: 0 });
    expect([...out.decisions, ...out.commitments, ...out.preferences, ...out.blockers]).toEqual([]);
  });
});

describe("describe_environment", () => {
  let t: TestTenant;

  beforeAll(async () => {
    t = await stack.createTenant("environment");
    const kept = await remember(t, { memoryType: "decision" });
    const old = await remember(t, { memoryType: "decision" });
    await memory.memories.revise({ predecessorId: old, memoryType: "decision", topic: "t", content: unique("successor"), tags: [], facts: [] }, writer(t));
    const archived = await remember(t, { memoryType: "note" });
    await memory.memories.archive({ memoryId: archived }, writer(t));
    await remember(t, { memoryType: "preference" });
    await remember(t, { memoryType: "commitment" });
    const done = await remember(t, { memoryType: "commitment" });
    await memory.memories.resolve({ memoryId: done, status: "resolved" }, writer(t));
    const waiting = await remember(t, { memoryType: "commitment" });
    await memory.memories.resolve({ memoryId: waiting, status: "waiting" }, writer(t));
    // Imported memories are stored without an embedding and queued for one.
    const [fact] = await importMemories(t, [{ memoryType: "fact" }]);
    // Background work proposes: one link and two extracted facts wait for review, then one is rejected.
    const consolidator = { identity: { tenantId: t.tenantId, userId: t.userId, scopes: [SCOPES.internalConsolidate] } };
    const link = await memory.proposals.createConsolidationProposals(
      { proposals: [{ fromId: fact!, toId: kept, edgeType: "extends", similarity: 0.95 }] },
      consolidator,
    );
    expect(link.createdIds).toHaveLength(1);
    const facts = await memory.proposals.createFactProposals(
      {
        memoryId: fact!,
        extractor: "test/1",
        facts: [
          { subject: "squat", predicate: "top_set.weight_kg", value: "98" },
          { subject: "bench", predicate: "top_set.weight_kg", value: "70" },
        ],
      },
      consolidator,
    );
    expect(facts.createdIds).toHaveLength(2);
    await memory.proposals.rejectProposal({ proposalId: facts.createdIds[0]! }, writer(t));
  });

  it("counts the tenant's memories by type and state, and commitments by status", async () => {
    const env = await memory.orientation.describeEnvironment({}, reader(t));
    expect(env.stats).toMatchObject({
      memoriesByType: { decision: 2, preference: 1, commitment: 3, fact: 1 },
      activeMemories: 7,
      supersededMemories: 1,
      archivedMemories: 1,
      commitmentsByStatus: { open: 1, resolved: 1, waiting: 1, expired: 0 },
      pendingEmbeddings: 1,
      // The imported memory has no vector yet; the other six live ones carry the configured model's.
      embeddings: { model: "hashing-512", dimensions: 512, embedded: 6, pending: 1 },
      pendingProposals: { consolidation: 1, fact: 1, total: 2 },
    });
    // Complete: every type is reported, zero or not, in the public order.
    expect(Object.keys(env.stats!.memoriesByType)).toEqual([...MEMORY_TYPES]);
    expect(env.stats!.memoriesByType).toMatchObject({ note: 0, pattern: 0, event: 0, blocker: 0 });
  });

  it("counts a live memory embedded by another model as pending for the configured one, and nothing else", async () => {
    // What a server started with a new model finds: vectors of the old one (set behind the service's back).
    const { rows } = await stack.ownerPool.query<{ id: string }>(
      `UPDATE memories SET embedding_model = 'retired-model'
        WHERE id = (SELECT id FROM memories WHERE tenant_id = $1 AND status = 'active' AND valid_to IS NULL AND embedding IS NOT NULL ORDER BY id LIMIT 1)
        RETURNING id`,
      [t.tenantId],
    );
    try {
      const env = await memory.orientation.describeEnvironment({}, reader(t));
      expect(env.stats).toMatchObject({ activeMemories: 7, pendingEmbeddings: 1, embeddings: { model: "hashing-512", embedded: 5, pending: 2 } });
    } finally {
      await stack.ownerPool.query("UPDATE memories SET embedding_model = 'hashing-512' WHERE id = $1", [rows[0]!.id]);
    }
  });

  it("reports configuration without secrets: embedding model, legs, queues, scopes and policy", async () => {
    const env = await memory.orientation.describeEnvironment({}, reader(t));
    expect(env.capabilities!.embedding).toMatchObject({ model: "hashing-512", dimensions: 512 });
    expect(env.capabilities!.searchLegs.map((l) => [l.leg, l.live])).toEqual([
      ["vector", true],
      ["fts", true],
      ["recency", true],
    ]);
    expect(env.capabilities!.queues.find((q) => q.name === EMBEDDINGS_QUEUE)?.live).toBe(true);
    const embeddings = env.stats!.queues.find((q) => q.name === EMBEDDINGS_QUEUE)!;
    // The imported memory's embedding job is waiting: nothing consumes this queue in this test.
    expect(embeddings.waiting + embeddings.delayed + embeddings.active).toBeGreaterThanOrEqual(1);
    expect(env.scopes.map((s) => s.name)).toEqual(["personal", "work"]);
    expect(env.retrievalScopePolicy).toMatchObject({ mode: "off" });
    const text = JSON.stringify(env, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value));
    expect(text).not.toMatch(/redis:|postgres|:\/\//i);
  });

  it("another tenant sees only its own counts", async () => {
    const other = await stack.createTenant("environment other");
    const env = await memory.orientation.describeEnvironment({}, reader(other));
    expect(env.stats).toMatchObject({
      activeMemories: 0,
      supersededMemories: 0,
      archivedMemories: 0,
      pendingEmbeddings: 0,
      embeddings: { model: "hashing-512", dimensions: 512, embedded: 0, pending: 0 },
      pendingProposals: { consolidation: 0, fact: 0, total: 0 },
    });
    expect(env.stats!.memoriesByType).toEqual(Object.fromEntries(MEMORY_TYPES.map((k) => [k, 0])));
    expect(env.stats!.commitmentsByStatus).toEqual(Object.fromEntries(COMMITMENT_STATUSES.map((k) => [k, 0])));
  });

  describe("dead letters", () => {
    let backend: QueueBackend;
    beforeAll(() => {
      // A consumer on the service's own queue prefix: it fails one job for good and acknowledges the rest.
      backend = createRedisQueueBackend({ redisUrl: TEST_REDIS_URL, prefix: stack.redisPrefix });
    });
    afterAll(async () => {
      await backend?.close();
    });

    it("counts jobs that failed for good in the dead-letter view, by cause", async () => {
      const before = await memory.orientation.describeEnvironment({}, reader(t));
      const queueBefore = before.stats!.queues.find((q) => q.name === EMBEDDINGS_QUEUE)!;
      const failedBefore = queueBefore.failed;
      backend.work(EMBEDDINGS_QUEUE, async (job) => {
        if (job.name === "doomed") throw new PermanentJobError("cannot succeed");
        if (job.name === "stranded") throw new UnavailableJobError("memory service unavailable");
      });
      await backend.queue.enqueue(EMBEDDINGS_QUEUE, "doomed", { n: 1 });
      await backend.queue.enqueue(EMBEDDINGS_QUEUE, "stranded", { n: 2 });
      await eventually(async () => {
        const env = await memory.orientation.describeEnvironment({}, reader(t));
        const queue = env.stats!.queues.find((q) => q.name === EMBEDDINGS_QUEUE)!;
        expect(queue.failed).toBe(failedBefore + 2);
        expect(queue.failedByCause).toEqual({
          ...queueBefore.failedByCause,
          permanent: queueBefore.failedByCause.permanent! + 1,
          unavailable: queueBefore.failedByCause.unavailable! + 1,
        });
        // The totals across queues are the service's too.
        expect(env.stats!.deadLetter).toBe(env.stats!.queues.reduce((sum, q) => sum + q.failed, 0));
        expect(env.stats!.deadLetterByCause.permanent).toBeGreaterThanOrEqual(1);
      });
    });
  });

  it("needs the read scope", async () => {
    const err = await rejection(memory.orientation.describeEnvironment({}, { identity: { tenantId: t.tenantId, userId: t.userId, scopes: [] } }));
    expect(err.reason).toBe("insufficient_scope");
  });
});

it("every briefing section name is answered by the service", async () => {
  const t = await stack.createTenant("briefing names");
  const res = await briefing(t, { selector: { kind: "all" }, sections: [...BRIEFING_SECTIONS] });
  expect(present(res)).toEqual([...SECTION_FIELDS]);
});
