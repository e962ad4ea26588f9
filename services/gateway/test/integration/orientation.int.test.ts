/**
 * Orientation end to end through a real gateway over the real memory and search services:
 * briefing, handoff and describe_environment through the official MCP client (modern and legacy
 * eras) and over REST (GET /api/v1/briefing, POST /api/v1/handoff, GET /api/v1/environment),
 * with the same answers on both, the retrieval default, the refusals and tenant isolation.
 */
import { createTenantWithKey, type CreatedTenant } from "@3ngram/memory";
import { SCOPES } from "@3ngram/rpc";
import {
  briefingOutputSchema,
  describeEnvironmentOutputSchema,
  handoffOutputSchema,
  rememberOutputSchema,
  type BriefingOutput,
  type DescribeEnvironmentOutput,
  type HandoffOutput,
} from "@3ngram/schema";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import type { RunningGateway } from "../../src/gateway.js";
import { startTestGateway } from "../support/gateway.js";
import { ERAS, callTool, connect, errorText, invalidArguments, structured } from "../support/mcp-client.js";

type Key = { tenantId: string; userId: string; apiKey: string };

let core: CoreServices;
let gateway: RunningGateway;
let tenantA: Key;
let tenantB: Key;
let readOnly: CreatedTenant;
let modern: Client;
let legacy: Client;
let other: Client;

const DAY_MS = 24 * 60 * 60 * 1000;
const ids = (items: ReadonlyArray<{ id: string }> | undefined) => (items ?? []).map((i) => i.id);

const get = (path: string, key = tenantA.apiKey) => fetch(`${gateway.url}${path}`, { headers: { Authorization: `Bearer ${key}` } });
const post = (path: string, json: unknown, key = tenantA.apiKey) =>
  fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify(json),
  });

const brief = async (client: Client, args: Record<string, unknown>): Promise<BriefingOutput> =>
  briefingOutputSchema.parse(structured(await callTool(client, "briefing", args)));
const handoff = async (client: Client, args: Record<string, unknown>): Promise<HandoffOutput> =>
  handoffOutputSchema.parse(structured(await callTool(client, "handoff", args)));
const describeEnv = async (client: Client): Promise<DescribeEnvironmentOutput> =>
  describeEnvironmentOutputSchema.parse(structured(await callTool(client, "describe_environment", {})));

async function remember(client: Client, args: Record<string, unknown>): Promise<string> {
  const out = rememberOutputSchema.parse(structured(await callTool(client, "remember", { topic: `${String(args.memoryType)} topic`, ...args })));
  return out.memory.id;
}

/** Everything but the clock and the cursor (which names the read's own snapshot), so two reads of the same state compare equal. */
const timeless = <T extends { generatedAt: string; changesCursor: string }>(out: T) => ({ ...out, generatedAt: "", changesCursor: "" });

const m: Record<string, string> = {};

beforeAll(async () => {
  core = await startCoreServices({ label: "gateway-orientation" });
  tenantA = await core.createTenant("orientation gateway a");
  tenantB = await core.createTenant("orientation gateway b");
  readOnly = await createTenantWithKey(core.ownerPool, { tenantName: "orientation read-only", scopes: [SCOPES.read] });
  gateway = await startTestGateway({ memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk });
  modern = await connect(gateway.url, tenantA.apiKey, ERAS[1]);
  legacy = await connect(gateway.url, tenantA.apiKey, ERAS[0]);
  other = await connect(gateway.url, tenantB.apiKey, ERAS[1]);

  const atlas = { scope: "work", project: "atlas" };
  m.decisionOld = await remember(modern, {
    memoryType: "decision",
    content: `Deploy atlas with blue-green releases. ${"Rationale follows. ".repeat(60)}`,
    ...atlas,
  });
  m.decisionNew = await remember(modern, { memoryType: "decision", content: "Atlas uses PostgreSQL 16.", ...atlas });
  m.overdue = await remember(modern, {
    memoryType: "commitment",
    content: "Send the atlas migration plan.",
    dueAt: new Date(Date.now() - DAY_MS).toISOString(),
    owner: "ana",
    ...atlas,
  });
  m.later = await remember(modern, {
    memoryType: "commitment",
    content: "Review atlas costs.",
    dueAt: new Date(Date.now() + 7 * DAY_MS).toISOString(),
    ...atlas,
  });
  m.blocker = await remember(modern, { memoryType: "blocker", content: "Atlas is waiting for database credentials.", ...atlas });
  m.preference = await remember(modern, { memoryType: "preference", content: "Keep atlas changes small.", ...atlas });
  m.unscoped = await remember(modern, { memoryType: "decision", content: "Work decisions live in the wiki too.", scope: "work" });
  m.personal = await remember(modern, { memoryType: "blocker", content: "Waiting on the plumber.", scope: "personal" });
});
afterAll(async () => {
  await Promise.all([modern?.close(), legacy?.close(), other?.close()]);
  await gateway?.close();
  await core?.close();
});

describe("MCP surface", () => {
  it.each([ERAS[0], ERAS[1]])("lists the three orientation tools as read-only with closed inputs ($name)", async (era) => {
    const client = era === ERAS[1] ? modern : legacy;
    const { tools } = await client.listTools();
    for (const name of ["briefing", "handoff", "describe_environment"]) {
      const tool = tools.find((t) => t.name === name);
      expect(tool, name).toBeDefined();
      expect(tool!.annotations).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
      expect(tool!.inputSchema.additionalProperties, name).toBe(false);
    }
    const briefing = tools.find((t) => t.name === "briefing")!;
    expect(briefing.inputSchema.required).toEqual(["selector"]);
    expect(briefing.description).toMatch(/selector/);
  });

  it("describe_environment lists exactly the tools the server registers", async () => {
    const env = await describeEnv(modern);
    const { tools } = await modern.listTools();
    expect([...env.capabilities.tools].sort()).toEqual(tools.map((t) => t.name).sort());
    expect(env.capabilities.toolCount).toBe(tools.length);
    expect(env.capabilities.version).toBe(modern.getServerVersion()?.version);
  });
});

describe("briefing", () => {
  it("briefs a project: exact counts, overdue commitments, topics only", async () => {
    const out = await brief(modern, { selector: { kind: "project", project: "atlas" } });
    expect(out).toMatchObject({ mode: "brief", sectionLimit: 3, selector: { kind: "project", project: "atlas" } });
    expect(out.appliedScope).toBeUndefined();
    expect(ids(out.recentDecisions?.items)).toEqual([m.decisionNew, m.decisionOld]);
    expect(out.commitments).toMatchObject({ count: 2, hasMore: false });
    expect(out.commitments!.items[0]).toMatchObject({ memoryId: m.overdue, status: "open", owner: "ana", overdue: true });
    expect(out.overdue!.items.map((i) => i.memoryId)).toEqual([m.overdue]);
    expect(ids(out.blockers?.items)).toEqual([m.blocker]);
    expect(ids(out.preferences?.items)).toEqual([m.preference]);
    expect(out.staleCandidates).toEqual({ count: 0, items: [], hasMore: false });
    expect(JSON.stringify(out)).not.toContain("credentials");
  });

  it("answers a section subset with a limit, and the same through every era and REST", async () => {
    const args = {
      selector: { kind: "scope_project", scope: "work", project: "atlas", includeUnscoped: true },
      sections: ["recentDecisions", "blockers"],
      sectionLimit: 1,
    };
    const out = await brief(modern, args);
    expect(
      Object.keys(out)
        .filter((k) => ["commitments", "overdue", "blockers", "staleCandidates", "recentDecisions", "preferences"].includes(k))
        .sort(),
    ).toEqual(["blockers", "recentDecisions"]);
    expect(out.recentDecisions).toMatchObject({ count: 3, hasMore: true });
    expect(ids(out.recentDecisions?.items)).toEqual([m.unscoped]);
    expect(timeless(await brief(legacy, args))).toEqual(timeless(out));
    const res = await get("/api/v1/briefing?kind=scope_project&scope=work&project=atlas&includeUnscoped=true&sections=recentDecisions,blockers&sectionLimit=1");
    expect(res.status).toBe(200);
    expect(timeless(briefingOutputSchema.parse(await res.json()))).toEqual(timeless(out));
  });

  it("GET /api/v1/briefing defaults like the tool", async () => {
    const res = await get("/api/v1/briefing?kind=all&mode=full");
    expect(res.status).toBe(200);
    const out = briefingOutputSchema.parse(await res.json());
    expect(out).toMatchObject({ mode: "full", sectionLimit: 25, selector: { kind: "all" } });
    expect(out.blockers).toMatchObject({ count: 2 });
    expect(timeless(out)).toEqual(timeless(await brief(modern, { selector: { kind: "all" }, mode: "full" })));
  });

  it("refuses bad arguments: -32602 over MCP, 400 naming the query parameter over REST", async () => {
    expect((await invalidArguments(callTool(modern, "briefing", {}))).data).toMatchObject({ field: "selector" });
    expect((await invalidArguments(callTool(modern, "briefing", { selector: { kind: "all" }, sectionLimit: 101 }))).data).toMatchObject({
      field: "sectionLimit",
    });
    expect((await invalidArguments(callTool(modern, "briefing", { selector: { kind: "all" }, sections: [] }))).data).toMatchObject({ field: "sections" });
    for (const [query, field] of [
      ["kind=all&colour=red", "colour"],
      ["mode=full", "kind"],
      ["kind=galaxy", "kind"],
      ["kind=scope", "scope"],
      ["kind=scope&scope=work&includeUnscoped=true", "includeUnscoped"],
      ["kind=scope_project&scope=work&project=atlas&includeUnscoped=maybe", "includeUnscoped"],
      ["kind=all&sections=blockers,blockers", "sections"],
      ["kind=all&sections=gossip", "sections.0"],
      ["kind=all&sectionLimit=abc", "sectionLimit"],
      ["kind=all&sectionLimit=0", "sectionLimit"],
      ["kind=all&mode=full&mode=brief", "mode"],
    ] as const) {
      const res = await get(`/api/v1/briefing?${query}`);
      expect(res.status, query).toBe(400);
      expect(await res.json(), query).toMatchObject({ error: "invalid_input", field });
    }
  });
});

describe("handoff", () => {
  it("exports excerpts with counts and per-section truncation, the same over MCP and REST", async () => {
    const args = { selector: { kind: "project", project: "atlas" }, generatedFor: "claude-code", sectionLimit: 1 };
    const out = await handoff(modern, args);
    expect(out).toMatchObject({ generatedFor: "claude-code", sectionLimit: 1, selector: { kind: "project", project: "atlas" } });
    expect(out.counts).toEqual({ decisions: 2, commitments: 2, preferences: 1, blockers: 1 });
    expect(out.truncated).toEqual({ decisions: true, commitments: true, preferences: false, blockers: false });
    expect(ids(out.decisions)).toEqual([m.decisionNew]);
    expect(out.decisions[0]).toMatchObject({ content: "Atlas uses PostgreSQL 16.", truncated: false, project: "atlas" });
    expect(out.commitments[0]).toMatchObject({ memoryId: m.overdue, content: "Send the atlas migration plan.", overdue: true, owner: "ana" });
    expect(out.blockers[0]!.content).toBe("Atlas is waiting for database credentials.");
    const res = await post("/api/v1/handoff", args);
    expect(res.status).toBe(200);
    expect(timeless(handoffOutputSchema.parse(await res.json()))).toEqual(timeless(out));
  });

  it("cuts long content to an excerpt and says so", async () => {
    const out = await handoff(modern, { selector: { kind: "project", project: "atlas" } });
    expect(out.generatedFor).toBeNull();
    const long = out.decisions.find((d) => d.id === m.decisionOld)!;
    expect(long.truncated).toBe(true);
    expect(long.content.length).toBeLessThanOrEqual(600);
    expect(long.contentLength).toBeGreaterThan(600);
  });

  it("refuses bad arguments over both transports", async () => {
    expect((await invalidArguments(callTool(modern, "handoff", { selector: { kind: "all" }, generatedFor: "x".repeat(257) }))).data).toMatchObject({
      field: "generatedFor",
    });
    const res = await post("/api/v1/handoff", { selector: { kind: "all" }, sectionLimit: 500 });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_input", field: "sectionLimit" });
  });
});

describe("describe_environment", () => {
  it("reports the tenant's counts and the configuration, the same over MCP and REST", async () => {
    const env = await describeEnv(modern);
    expect(env.stats).toMatchObject({
      memoriesByType: { decision: 3, commitment: 2, blocker: 2, preference: 1, fact: 0, note: 0, pattern: 0, event: 0 },
      activeMemories: 8,
      supersededMemories: 0,
      archivedMemories: 0,
      commitmentsByStatus: { open: 2, waiting: 0, resolved: 0, expired: 0 },
      // Every live memory carries the configured model's vector: nothing to re-embed.
      embeddings: { model: "hashing-512", dimensions: 512, embedded: 8, pending: 0 },
      pendingProposals: { consolidation: 0, fact: 0, total: 0 },
    });
    expect(env.capabilities.embedding).toEqual({ model: "hashing-512", dimensions: 512 });
    expect(env.capabilities.searchLegs.every((l) => l.live)).toBe(true);
    expect(env.capabilities.queues.map((q) => q.name)).toContain("embeddings");
    expect(env.stats.deadLetter).toBe(env.stats.queues.reduce((n, q) => n + q.failed, 0));
    expect(env.scopes.map((s) => s.name)).toEqual(["personal", "work"]);
    expect(env.retrievalScopePolicy).toEqual({ mode: "off", scope: null });
    expect(JSON.stringify(env)).not.toMatch(/:\/\/|redis|postgres/i);

    const res = await get("/api/v1/environment");
    expect(res.status).toBe(200);
    const rest = describeEnvironmentOutputSchema.parse(await res.json());
    // Queue depths move as background jobs come and go; everything else is the same read.
    const settled = (e: DescribeEnvironmentOutput) => ({ ...e, stats: { ...e.stats, queues: [], deadLetter: 0 } });
    expect(settled(rest)).toEqual(settled(env));
  });

  it("takes no arguments", async () => {
    expect((await invalidArguments(callTool(modern, "describe_environment", { verbose: true }))).data).toMatchObject({ field: "verbose" });
    const res = await get("/api/v1/environment?verbose=1");
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_input", field: "verbose" });
  });
});

describe("retrieval default", () => {
  it("default narrows all and echoes appliedScope; require refuses all on both transports", async () => {
    structured(await callTool(modern, "configure_scope", { action: "set_retrieval_default", mode: "default", scope: "personal" }));
    const narrowed = await brief(modern, { selector: { kind: "all" }, sections: ["blockers"] });
    expect(narrowed).toMatchObject({ appliedScope: "personal", selector: { kind: "scope", scope: "personal" } });
    expect(ids(narrowed.blockers?.items)).toEqual([m.personal]);

    structured(await callTool(modern, "configure_scope", { action: "set_retrieval_default", mode: "require" }));
    const refused = await callTool(modern, "briefing", { selector: { kind: "all" } });
    expect(errorText(refused)).toMatch(/^invalid_input: selector\.kind: .*personal, work/);
    const handoffRefused = await callTool(modern, "handoff", { selector: { kind: "all" } });
    expect(errorText(handoffRefused)).toMatch(/^invalid_input: selector\.kind/);
    const res = await get("/api/v1/briefing?kind=all");
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_input", field: "kind", detail: expect.stringMatching(/^kind: .*personal, work/) });
    const body = await post("/api/v1/handoff", { selector: { kind: "all" } });
    expect(body.status).toBe(400);
    expect(await body.json()).toMatchObject({ error: "invalid_input", field: "selector.kind" });
    const scoped = await brief(modern, { selector: { kind: "scope", scope: "work" }, sections: ["blockers"] });
    expect(ids(scoped.blockers?.items)).toEqual([m.blocker]);

    structured(await callTool(modern, "configure_scope", { action: "set_retrieval_default", mode: "off" }));
  });
});

describe("access and isolation", () => {
  it("a read-only key may use all three", async () => {
    for (const path of ["/api/v1/briefing?kind=all", "/api/v1/environment"]) expect((await get(path, readOnly.apiKey)).status, path).toBe(200);
    expect((await post("/api/v1/handoff", { selector: { kind: "all" } }, readOnly.apiKey)).status).toBe(200);
  });

  it("requests without a key are refused", async () => {
    const res = await fetch(`${gateway.url}/api/v1/briefing?kind=all`);
    expect(res.status).toBe(401);
  });

  it("another tenant's orientation reads count none of these rows", async () => {
    const out = await brief(other, { selector: { kind: "all" }, mode: "full" });
    for (const name of ["commitments", "overdue", "blockers", "staleCandidates", "recentDecisions", "preferences"] as const) {
      expect(out[name], name).toEqual({ count: 0, items: [], hasMore: false });
    }
    const exported = await handoff(other, { selector: { kind: "project", project: "atlas" } });
    expect(exported.counts).toEqual({ decisions: 0, commitments: 0, preferences: 0, blockers: 0 });
    const env = await describeEnv(other);
    expect(env.stats.activeMemories).toBe(0);
    expect(Object.values(env.stats.memoriesByType).every((n) => n === 0)).toBe(true);
    const rest = await get("/api/v1/briefing?kind=project&project=atlas", tenantB.apiKey);
    expect(briefingOutputSchema.parse(await rest.json()).recentDecisions).toMatchObject({ count: 0 });
  });
});

describe("changes since the last briefing (MCP, the agent's resume loop)", () => {
  const selector = { kind: "project", project: "resume" };
  const resume = { scope: "work", project: "resume" };
  const SECTION_NAMES = ["commitments", "overdue", "blockers", "staleCandidates", "recentDecisions", "preferences"] as const;

  it("briefing → cursor; three changes; briefing with since returns exactly those three, with counts", async () => {
    const commitment = await remember(modern, { memoryType: "commitment", content: "Ship the resume loop.", ...resume });
    const blocker = await remember(modern, { memoryType: "blocker", content: "Resume loop waits for the cursor design.", ...resume });
    await remember(modern, { memoryType: "decision", content: "Cursors are snapshots.", ...resume });
    const first = await brief(modern, { selector });
    expect(first.changesCursor.length).toBeGreaterThan(0);
    expect(first.commitments!.items.map((i) => i.memoryId)).toContain(commitment);

    // Three changes, each through its tool.
    const decision = await remember(modern, { memoryType: "decision", content: "Deltas count every change exactly.", ...resume });
    structured(await callTool(modern, "resolve", { memoryId: commitment, status: "resolved" }));
    structured(await callTool(modern, "resolve", { memoryId: blocker, status: "resolved" }));

    const delta = await brief(modern, { selector, since: first.changesCursor });
    expect(delta.changesSince).toBe(first.generatedAt);
    const changed = SECTION_NAMES.flatMap((name) => delta[name]!.items.map((i) => `${name}: ${i.change} ${"memoryId" in i ? i.memoryId : i.id}`));
    expect(changed.sort()).toEqual([`blockers: archived ${blocker}`, `commitments: resolved ${commitment}`, `recentDecisions: new ${decision}`].sort());
    const none = { new: 0, superseded: 0, resolved: 0, expired: 0, archived: 0, erased: 0 };
    expect(delta.recentDecisions).toMatchObject({ count: 1, hasMore: false, changes: { ...none, new: 1 } });
    expect(delta.commitments).toMatchObject({ count: 1, hasMore: false, changes: { ...none, resolved: 1 } });
    expect(delta.blockers).toMatchObject({ count: 1, hasMore: false, changes: { ...none, archived: 1 } });
    for (const name of ["overdue", "staleCandidates", "preferences"] as const)
      expect(delta[name], name).toEqual({ count: 0, items: [], hasMore: false, changes: none });

    // The same answer through a legacy client and over REST (GET /api/v1/briefing?since=…).
    expect(timeless(await brief(legacy, { selector, since: first.changesCursor }))).toEqual(timeless(delta));
    const rest = await get(`/api/v1/briefing?kind=project&project=resume&since=${encodeURIComponent(first.changesCursor)}`);
    expect(rest.status).toBe(200);
    expect(timeless(briefingOutputSchema.parse(await rest.json()))).toEqual(timeless(delta));

    // Handoff takes the same cursor, over MCP and REST.
    const handed = await handoff(modern, { selector, since: first.changesCursor });
    expect(handed.decisions.map((d) => [d.change, d.id])).toEqual([["new", decision]]);
    expect(handed.commitments.map((c) => [c.change, c.memoryId])).toEqual([["resolved", commitment]]);
    expect(handed.blockers.map((b) => [b.change, b.id])).toEqual([["archived", blocker]]);
    expect(handed.counts).toEqual({ decisions: 1, commitments: 1, preferences: 0, blockers: 1 });
    const handedRest = await post("/api/v1/handoff", { selector, since: first.changesCursor });
    expect(timeless(handoffOutputSchema.parse(await handedRest.json()))).toEqual(timeless(handed));

    // Caught up: the delta's own cursor shows nothing new.
    const caughtUp = await brief(modern, { selector, since: delta.changesCursor });
    for (const name of SECTION_NAMES) expect(caughtUp[name]!.count, name).toBe(0);
  });

  it("a foreign or altered cursor is a clear invalid_input naming since, on MCP and REST", async () => {
    const mine = (await brief(modern, { selector })).changesCursor;
    const foreign = await callTool(other, "briefing", { selector, since: mine });
    expect(errorText(foreign)).toMatch(/^invalid_input: since: not a changesCursor this server issued to you/);
    const wrongSelector = await callTool(modern, "handoff", { selector: { kind: "all" }, since: mine });
    expect(errorText(wrongSelector)).toMatch(/^invalid_input: since: issued for a different selector/);
    const rest = await get(`/api/v1/briefing?kind=project&project=resume&since=${encodeURIComponent(`${mine}x`)}`);
    expect(rest.status).toBe(400);
    expect(await rest.json()).toMatchObject({ error: "invalid_input", field: "since" });
  });
});
