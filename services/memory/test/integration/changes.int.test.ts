/**
 * Briefing and handoff with `since` through the real memory service over gRPC on a fresh
 * PostgreSQL database: every kind of change each section can see (new, superseded, resolved,
 * expired, archived, erased; reopened commitments; overdue and stale by the clock), the changes
 * that are not section changes (a waiting toggle, an embedding, another project), exact counts,
 * a write in flight when the cursor was issued (counted once, by the read after its commit), and
 * the refusals: another tenant's, another selector's, an altered and a stale cursor.
 */
import { createHmac, randomUUID } from "node:crypto";
import type { ArchiveService } from "@3ngram/proto/memory/v1";
import { SCOPES, type CallOptions, type RpcMethods } from "@3ngram/rpc";
import { ERASED_MARKER, type BriefingOutput } from "@3ngram/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reader, rejection, writer, type TestTenant } from "../../../../test/support/calls.js";
import { startCoreServices, type CoreServices, type PublicMemoryClient } from "../../../../test/support/core-services.js";
import { importFile } from "../../../../test/support/archive.js";
import { staleWindow } from "../../src/db/changes.js";
import { eventually } from "../../../../test/support/processes.js";

type RememberInit = Parameters<PublicMemoryClient["memories"]["remember"]>[0];

const DAY_MS = 24 * 60 * 60 * 1000;
const PROJECT = { kind: "project", project: "delta" } as const;

let stack: CoreServices;
let memory: PublicMemoryClient;
let archiveRpc: RpcMethods<typeof ArchiveService>;
let tenantA: TestTenant;
let tenantB: TestTenant;

let seq = 0;
const unique = (label: string) => `${label} ${randomUUID()} #${++seq}`;
const eraser = (t: TestTenant): CallOptions => ({ identity: { tenantId: t.tenantId, userId: t.userId, scopes: [SCOPES.erase] } });

async function remember(t: TestTenant, fields: Partial<RememberInit> & Pick<RememberInit, "memoryType">, project = "delta"): Promise<string> {
  const stored = await memory.memories.remember(
    { topic: `${fields.memoryType} topic`, content: unique(fields.memoryType), project, ...fields } as RememberInit,
    writer(t),
  );
  return stored.memory!.id;
}

const brief = (t: TestTenant, since?: string, selector: Record<string, unknown> = PROJECT) =>
  memory.orientation.briefing({ selector, mode: "full", ...(since !== undefined ? { since } : {}) }, reader(t));

type SectionName = "commitments" | "overdue" | "blockers" | "staleCandidates" | "recentDecisions" | "preferences";
const SECTIONS: readonly SectionName[] = ["commitments", "overdue", "blockers", "staleCandidates", "recentDecisions", "preferences"];

/** Each section's changes as "change id" (memory ids for commitments), sorted, and its counts. */
function changesOf(res: BriefingOutput): Record<SectionName, { lines: string[]; count: number; changes: Record<string, number> }> {
  const out = {} as Record<SectionName, { lines: string[]; count: number; changes: Record<string, number> }>;
  for (const name of SECTIONS) {
    const section = res[name]!;
    const lines = section.items.map((i) => `${i.change} ${"memoryId" in i ? i.memoryId : i.id}`).sort();
    const changes = section.changes!;
    out[name] = { lines, count: section.count, changes: Object.fromEntries(Object.entries(changes).filter(([, n]) => n > 0)) };
  }
  return out;
}

const ids: Record<string, string> = {};

beforeAll(async () => {
  stack = await startCoreServices({ label: "changes" });
  memory = await stack.publicMemoryClient();
  archiveRpc = (await stack.memoryClient()).archive;
  tenantA = await stack.createTenant("changes a");
  tenantB = await stack.createTenant("changes b");
});
afterAll(async () => {
  await stack?.close();
});

describe("changes since a cursor", () => {
  it("lists exactly what entered or left each section, with exact counts", async () => {
    ids.decisionKept = await remember(tenantA, { memoryType: "decision" });
    ids.decisionErased = await remember(tenantA, { memoryType: "decision" });
    ids.commitmentResolved = await remember(tenantA, { memoryType: "commitment" });
    ids.commitmentExpired = await remember(tenantA, {
      memoryType: "commitment",
      dueAt: new Date(Math.floor((Date.now() - DAY_MS) / 1000) * 1000).toISOString(),
    });
    ids.commitmentToggled = await remember(tenantA, { memoryType: "commitment" });
    ids.commitmentReopened = await remember(tenantA, { memoryType: "commitment" });
    await memory.memories.resolve({ memoryId: ids.commitmentReopened, status: "resolved" }, writer(tenantA));
    ids.blocker = await remember(tenantA, { memoryType: "blocker" });
    ids.preferenceOld = await remember(tenantA, { memoryType: "preference" });
    // Two memories that cross a section's time line a few seconds after the cursor: one falls due,
    // one (imported, so its valid time is in the past) grows older than the stale window.
    const horizon = Math.ceil((Date.now() + 5_000) / 1000) * 1000;
    const imported = await importFile(
      archiveRpc,
      {
        format: "3ngram",
        ndjson: JSON.stringify({
          kind: "memory",
          key: randomUUID(),
          memoryType: "fact",
          topic: "almost stale",
          content: unique("fact"),
          project: "delta",
          validFrom: new Date(horizon - 30 * DAY_MS).toISOString(),
          recordedAt: new Date(horizon - 30 * DAY_MS).toISOString(),
        }),
      },
      writer(tenantA),
    );
    ids.turnsStale = imported.results[0]!.id!;
    ids.turnsOverdue = await remember(tenantA, { memoryType: "commitment", dueAt: new Date(horizon).toISOString() });

    const first = await brief(tenantA);
    expect(first.changesCursor).not.toBe("");
    expect(first.changesSince).toBeUndefined();
    expect(first.recentDecisions!.changes).toBeUndefined();
    expect(first.overdue!.items.map((i) => i.memoryId)).not.toContain(ids.turnsOverdue);
    expect(first.staleCandidates!.items.map((i) => i.id)).not.toContain(ids.turnsStale);

    // The changes.
    ids.decisionNew = await remember(tenantA, { memoryType: "decision" });
    await memory.memories.resolve({ memoryId: ids.commitmentResolved, status: "resolved" }, writer(tenantA));
    await memory.memories.resolve({ memoryId: ids.commitmentExpired, status: "expired" }, writer(tenantA));
    await memory.memories.resolve({ memoryId: ids.commitmentReopened, status: "open" }, writer(tenantA));
    await memory.memories.resolve({ memoryId: ids.blocker, status: "resolved" }, writer(tenantA));
    const revised = await memory.memories.revise(
      { predecessorId: ids.preferenceOld, memoryType: "preference", topic: "preference topic", content: unique("preference"), project: "delta" },
      writer(tenantA),
    );
    ids.preferenceNew = revised.memory!.id;
    await memory.archive.erase({ ids: [ids.decisionErased], reason: "mistake" }, eraser(tenantA));
    // Not section changes: a toggle between two open states, an embedding, another project's memory.
    await memory.memories.resolve({ memoryId: ids.commitmentToggled, status: "waiting" }, writer(tenantA));
    await memory.maintenance.storeEmbedding(
      { memoryId: ids.decisionKept, model: "another-model", vector: [0.6, 0.8] },
      { identity: { tenantId: tenantA.tenantId, scopes: [SCOPES.internalEmbed] } },
    );
    await remember(tenantA, { memoryType: "decision" }, "other-project");

    // Let the two time lines pass (the database clock decides).
    await eventually(
      async () => {
        const { rows } = await stack.ownerPool.query<{ past: boolean }>("SELECT now() > $1::timestamptz AS past", [new Date(horizon).toISOString()]);
        expect(rows[0]!.past).toBe(true);
      },
      30_000,
      100,
    );

    const second = await brief(tenantA, first.changesCursor);
    expect(second.changesSince).toEqual(first.generatedAt);
    const c = changesOf(second);
    expect(c.recentDecisions).toEqual({ lines: sorted([`new ${ids.decisionNew}`, `erased ${ids.decisionErased}`]), count: 2, changes: { new: 1, erased: 1 } });
    expect(c.commitments).toEqual({
      lines: sorted([`resolved ${ids.commitmentResolved}`, `expired ${ids.commitmentExpired}`, `new ${ids.commitmentReopened}`]),
      count: 3,
      changes: { resolved: 1, expired: 1, new: 1 },
    });
    expect(c.overdue).toEqual({ lines: sorted([`expired ${ids.commitmentExpired}`, `new ${ids.turnsOverdue}`]), count: 2, changes: { expired: 1, new: 1 } });
    expect(c.blockers).toEqual({ lines: [`archived ${ids.blocker}`], count: 1, changes: { archived: 1 } });
    expect(c.preferences).toEqual({
      lines: sorted([`superseded ${ids.preferenceOld}`, `new ${ids.preferenceNew}`]),
      count: 2,
      changes: { superseded: 1, new: 1 },
    });
    expect(c.staleCandidates).toEqual({ lines: [`new ${ids.turnsStale}`], count: 1, changes: { new: 1 } });
    // The superseded line names its successor; the erased line shows only the marker.
    expect(second.preferences!.items.find((i) => i.id === ids.preferenceOld)!.supersededBy).toBe(ids.preferenceNew);
    expect(second.recentDecisions!.items.find((i) => i.id === ids.decisionErased)!.topic).toBe(ERASED_MARKER);

    // Nothing changed since the second read: every section is empty, and a third cursor follows on.
    const third = await brief(tenantA, second.changesCursor);
    for (const name of SECTIONS) expect(third[name], name).toMatchObject({ count: 0, items: [], hasMore: false });
    expect(third.changesCursor).not.toBe(second.changesCursor);
  });

  it("bounds the changes by sectionLimit with the exact count, and reads only the sections asked for", async () => {
    const before = await brief(tenantA);
    const made = [
      await remember(tenantA, { memoryType: "decision" }),
      await remember(tenantA, { memoryType: "decision" }),
      await remember(tenantA, { memoryType: "decision" }),
    ];
    const res = await memory.orientation.briefing(
      { selector: PROJECT, sections: ["recentDecisions"], sectionLimit: 2, since: before.changesCursor },
      reader(tenantA),
    );
    expect(res.commitments).toBeUndefined();
    expect(res.recentDecisions).toMatchObject({ count: 3, hasMore: true, changes: { new: 3 } });
    // Latest change first.
    expect(res.recentDecisions!.items.map((i) => i.id)).toEqual([made[2], made[1]]);
  });

  it("counts a write that was in flight when the cursor was issued once, in the read after it committed", async () => {
    const before = await brief(tenantA);
    const client = await stack.ownerPool.connect();
    const id = randomUUID();
    try {
      await client.query("BEGIN");
      await client.query(
        `INSERT INTO memories (id, tenant_id, memory_type, topic, content, content_hash, project) VALUES ($1, $2, 'decision', 'in flight', $3, $3, 'delta')`,
        [id, tenantA.tenantId, unique("in flight")],
      );
      await client.query("INSERT INTO memory_events (id, tenant_id, memory_id, event_kind, actor_kind) VALUES ($1, $2, $3, 'create', 'system')", [
        randomUUID(),
        tenantA.tenantId,
        id,
      ]);
      // Issued while that transaction is open: its snapshot does not see it, though the row's clock is already earlier.
      const during = await brief(tenantA, before.changesCursor);
      expect(during.recentDecisions!.items.map((i) => i.id)).not.toContain(id);
      await client.query("COMMIT");
      const after = await brief(tenantA, during.changesCursor);
      expect(after.recentDecisions!.items.map((i) => `${i.change} ${i.id}`)).toEqual([`new ${id}`]);
      const next = await brief(tenantA, after.changesCursor);
      expect(next.recentDecisions!.count).toBe(0);
    } finally {
      await client.query("ROLLBACK").catch(() => undefined);
      client.release();
    }
  });

  it("handoff takes the same cursor: changed lines with excerpts and counts by kind", async () => {
    const before = await brief(tenantA);
    const decision = await remember(tenantA, { memoryType: "decision", content: "Handoff sees this new decision." });
    const commitment = await remember(tenantA, { memoryType: "commitment" });
    const res = await memory.orientation.handoff({ selector: PROJECT, since: before.changesCursor }, reader(tenantA));
    expect(res.decisions.map((d) => [d.change, d.id, d.content])).toEqual([["new", decision, "Handoff sees this new decision."]]);
    expect(res.commitments.map((d) => [d.change, d.memoryId])).toEqual([["new", commitment]]);
    expect(res.preferences).toEqual([]);
    expect(res.counts).toMatchObject({ decisions: 1, commitments: 1, preferences: 0, blockers: 0 });
    expect(res.changes!.decisions).toMatchObject({ new: 1, superseded: 0 });
    expect(res.changesSince).toEqual(before.generatedAt);
    // And a handoff's cursor works for the next briefing.
    const after = await brief(tenantA, res.changesCursor);
    expect(after.recentDecisions!.count).toBe(0);
  });

  it("refuses another tenant's, another selector's, an altered and a stale cursor, naming since", async () => {
    const mine = (await brief(tenantA)).changesCursor;
    const refusals: Array<[() => Promise<unknown>, RegExp]> = [
      [() => brief(tenantB, mine), /another tenant/],
      [() => brief(tenantA, mine, { kind: "all" }), /different selector/],
      [() => brief(tenantA, alterMiddleOfMac(mine)), /not a changesCursor/],
      // The same bytes spelled otherwise: a spare bit of the last character set.
      [() => brief(tenantA, setSpareBit(mine)), /not a changesCursor/],
      [() => brief(tenantA, "garbage"), /not a changesCursor/],
      [() => memory.orientation.handoff({ selector: { kind: "scope", scope: "work" }, since: mine }, reader(tenantA)), /different selector/],
    ];
    // A cursor signed with the real key for a read 31 days ago: well formed, this tenant's, too old.
    const { rows } = await stack.ownerPool.query<{ secret: string; snapshot: string }>(
      "SELECT secret, pg_current_snapshot()::text AS snapshot FROM change_cursor_keys",
    );
    const [body] = mine.split(".");
    const payload = JSON.parse(Buffer.from(body!, "base64url").toString("utf8")) as Record<string, unknown>;
    const old = Buffer.from(
      JSON.stringify({ ...payload, s: rows[0]!.snapshot, t: new Date(Date.now() - 31 * DAY_MS).toISOString().replace("Z", "000Z") }),
    ).toString("base64url");
    const mac = createHmac("sha256", Buffer.from(rows[0]!.secret, "hex")).update(`1\n${tenantA.tenantId}\n${old}`).digest("base64url");
    refusals.push([() => brief(tenantA, `${old}.${mac}`), /older than 30 days/]);
    for (const [call, message] of refusals) {
      const err = await rejection(call());
      expect(err.reason).toBe("invalid_input");
      expect(err.details.field).toBe("since");
      expect(err.message).toMatch(message);
    }
  });
});

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** The cursor with one character of its MAC's middle replaced by another. */
function alterMiddleOfMac(cursor: string): string {
  const at = cursor.lastIndexOf(".") + 10;
  const other = cursor[at] === "A" ? "B" : "A";
  return `${cursor.slice(0, at)}${other}${cursor.slice(at + 1)}`;
}

/** An HMAC-SHA256 in base64url ends in a character whose two low bits carry nothing; set one. */
function setSpareBit(cursor: string): string {
  const last = BASE64URL.indexOf(cursor.at(-1)!);
  return `${cursor.slice(0, -1)}${BASE64URL[last | 1]}`;
}

function sorted(values: string[]): string[] {
  return [...values].sort();
}

describe("the stale window", () => {
  it("counts 24-hour days whatever the session's time zone, as the full briefing's clock does", async () => {
    const client = await stack.ownerPool.connect();
    try {
      // New York left summer time on 2026-11-01: thirty calendar days before 2026-11-20 are 721 hours.
      await client.query("SET TIME ZONE 'America/New_York'");
      const clock = "2026-11-20T12:00:00.000Z";
      const { rows } = await client.query<{ before: Date }>(`SELECT $1::timestamptz - ${staleWindow("$2")} AS before`, [clock, 30]);
      expect(rows[0]!.before.toISOString()).toBe(new Date(Date.parse(clock) - 30 * 24 * 60 * 60 * 1000).toISOString());
    } finally {
      client.release();
    }
  });
});
