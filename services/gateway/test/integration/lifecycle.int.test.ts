/**
 * revise, resolve, archive and history end to end: the official MCP client and plain HTTP against a
 * real gateway over the real memory and search services on a fresh PostgreSQL database.
 */
import { randomUUID } from "node:crypto";
import { createTenantWithKey } from "@3ngram/memory";
import {
  archiveOutputSchema,
  getMemoriesOutputSchema,
  historyOutputSchema,
  rememberOutputSchema,
  resolveOutputSchema,
  reviseOutputSchema,
  type CommitmentStatus,
  type MemoryRecord,
} from "@3ngram/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { connectMcp, type McpConnection } from "../../../../test/support/mcp.js";
import { invalidArguments, type ToolResult } from "../support/mcp-client.js";
import type { RunningGateway } from "../../src/gateway.js";
import { startTestGateway } from "../support/gateway.js";

type Tenant = { tenantId: string; userId: string; apiKey: string };

let core: CoreServices;
let gateway: RunningGateway;
let tenantA: Tenant;
let tenantB: Tenant;

const UNKNOWN_ID = "0190c0de-0000-7000-8000-00000000dead";
const unique = (label: string) => `${label} ${randomUUID()}`;

beforeAll(async () => {
  core = await startCoreServices({ label: "gateway-lifecycle" });
  tenantA = await core.createTenant("lifecycle gateway a");
  tenantB = await core.createTenant("lifecycle gateway b");
  gateway = await startTestGateway({ memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk });
});
afterAll(async () => {
  await gateway?.close();
  await core?.close();
});

function rest(path: string, init: { method?: string; json?: unknown; key?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = { Authorization: `Bearer ${init.key ?? tenantA.apiKey}` };
  if (init.json !== undefined) headers["Content-Type"] = "application/json";
  return fetch(`${gateway.url}${path}`, {
    method: init.method ?? (init.json !== undefined ? "POST" : "GET"),
    headers,
    ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
  });
}

/** Status and body of a REST answer with the request id dropped and one id blanked, for comparison. */
async function restAnswer(res: Response, id: string): Promise<{ status: number; body: unknown }> {
  const { request_id: _requestId, ...body } = (await res.json()) as Record<string, unknown>;
  return { status: res.status, body: JSON.parse(JSON.stringify(body).replaceAll(id, "ID")) as unknown };
}

async function getMemories(mcp: McpConnection, ids: string[]): Promise<Map<string, MemoryRecord>> {
  const out = getMemoriesOutputSchema.parse(await mcp.call("get_memories", { ids }));
  expect(out.notFound).toEqual([]);
  return new Map(out.memories.map((m) => [m.id, m]));
}

describe.each([
  { era: "legacy", modern: false },
  { era: "modern", modern: true },
])("MCP tools ($era client)", ({ modern }) => {
  let mcp: McpConnection;
  let other: McpConnection;
  beforeAll(async () => {
    mcp = await connectMcp(`${gateway.url}/mcp`, tenantA.apiKey, { modern });
    other = await connectMcp(`${gateway.url}/mcp`, tenantB.apiKey, { modern });
  });
  afterAll(async () => {
    await Promise.all([mcp?.close(), other?.close()]);
  });

  it("advertises revise and resolve with their hints and schemas", async () => {
    const { tools } = await mcp.client.listTools();
    const revise = tools.find((t) => t.name === "revise");
    const resolve = tools.find((t) => t.name === "resolve");
    expect(revise?.annotations).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false });
    expect(resolve?.annotations).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    expect(revise?.inputSchema.required).toEqual(expect.arrayContaining(["predecessorId", "memoryType", "topic", "content"]));
    expect(resolve?.inputSchema.required).toEqual(expect.arrayContaining(["memoryId", "status"]));
    expect(resolve?.description).toMatch(/"open".*reopens/);
    expect(revise?.outputSchema?.properties).toHaveProperty("predecessorId");
    expect(resolve?.outputSchema?.properties).toHaveProperty("previousStatus");
  });

  it("revise twice: get_memories shows the chain, each predecessor closed with its content unchanged", async () => {
    const first = rememberOutputSchema.parse(
      await mcp.call("remember", { memoryType: "decision", topic: "queue", content: unique("Jobs run on RabbitMQ."), scope: "work", project: "atlas" }),
    );
    const v1 = (await getMemories(mcp, [first.memory.id])).get(first.memory.id)!;
    const second = reviseOutputSchema.parse(
      await mcp.call("revise", {
        predecessorId: first.memory.id,
        memoryType: "decision",
        topic: "queue",
        content: unique("Jobs run on Redis with BullMQ."),
        scope: "work",
        project: "atlas",
      }),
    );
    expect(second).toMatchObject({ predecessorId: first.memory.id, edgeIntent: "supersedes", embedded: "done", memory: { scope: "work", project: "atlas" } });
    const third = reviseOutputSchema.parse(
      await mcp.call("revise", {
        predecessorId: second.memory.id,
        edgeIntent: "updates",
        memoryType: "decision",
        topic: "queue",
        content: unique("BullMQ, with a dead-letter view."),
      }),
    );
    expect(third.edgeIntent).toBe("updates");

    const read = await getMemories(mcp, [first.memory.id, second.memory.id, third.memory.id]);
    const [a, b, c] = [read.get(first.memory.id)!, read.get(second.memory.id)!, read.get(third.memory.id)!];
    expect(a).toMatchObject({ content: v1.content, topic: v1.topic, status: "active", supersededBy: b.id });
    expect(a.validTo).not.toBeNull();
    expect(b).toMatchObject({ supersededBy: c.id });
    expect(b.validTo).not.toBeNull();
    expect(c).toMatchObject({ supersededBy: null, validTo: null, status: "active" });

    // Revising an old version names the current head.
    for (const old of [a.id, b.id]) {
      const text = await mcp.callError("revise", { predecessorId: old, memoryType: "decision", topic: "queue", content: unique("late") });
      expect(text).toBe(`conflict: memory ${old} is already superseded; the current head is ${c.id}`);
    }
  });

  it("resolve walks every legal transition, refuses an illegal one, and reopens with status open", async () => {
    const stored = rememberOutputSchema.parse(await mcp.call("remember", { memoryType: "commitment", topic: "report", content: unique("Send the report.") }));
    const id = stored.memory.id;
    const path: CommitmentStatus[] = ["waiting", "open", "resolved", "open", "expired", "open", "waiting", "resolved", "open", "waiting", "expired", "open"];
    let from: CommitmentStatus = "open";
    for (const to of path) {
      const out = resolveOutputSchema.parse(await mcp.call("resolve", { memoryId: id, status: to }));
      expect(out).toEqual({ memoryId: id, commitmentId: stored.commitment!.id, status: to, previousStatus: from });
      const record = (await getMemories(mcp, [id])).get(id)!;
      expect(record.commitment?.status).toBe(to);
      from = to;
    }
    // Same state: a no-op success.
    expect(resolveOutputSchema.parse(await mcp.call("resolve", { memoryId: id, status: "open" }))).toMatchObject({ status: "open", previousStatus: "open" });
    await mcp.call("resolve", { memoryId: id, status: "resolved" });
    expect(await mcp.callError("resolve", { memoryId: id, status: "waiting" })).toBe("invalid_transition: resolved -> waiting");
    expect((await getMemories(mcp, [id])).get(id)!.commitment?.status).toBe("resolved");
    const bad = await invalidArguments(mcp.client.callTool({ name: "resolve", arguments: { memoryId: id, status: "finished" } }) as Promise<ToolResult>);
    expect(bad.data).toMatchObject({ reason: "invalid_input", field: "status" });
  });

  it("a commitment's dueAt and owner round-trip through remember, get_memories and revise", async () => {
    const dueAt = "2031-05-06T07:08:09.000Z";
    const stored = rememberOutputSchema.parse(
      await mcp.call("remember", { memoryType: "commitment", topic: "audit", content: unique("Finish the audit."), dueAt, owner: "ana" }),
    );
    expect(stored.commitment).toMatchObject({ status: "open", dueAt, owner: "ana" });
    expect((await getMemories(mcp, [stored.memory.id])).get(stored.memory.id)!.commitment).toMatchObject({ status: "open", dueAt, owner: "ana" });
    await mcp.call("resolve", { memoryId: stored.memory.id, status: "waiting" });

    const revised = reviseOutputSchema.parse(
      await mcp.call("revise", {
        predecessorId: stored.memory.id,
        memoryType: "commitment",
        topic: "audit",
        content: unique("Finish the audit, with the appendix."),
      }),
    );
    expect(revised.commitment).toMatchObject({ status: "waiting", dueAt, owner: "ana" });
    expect(revised.commitment!.id).not.toBe(stored.commitment!.id);
    const read = await getMemories(mcp, [stored.memory.id, revised.memory.id]);
    expect(read.get(revised.memory.id)!.commitment).toMatchObject({ status: "waiting", dueAt, owner: "ana" });
    expect(read.get(stored.memory.id)!.supersededBy).toBe(revised.memory.id);

    const newDue = "2031-12-31T00:00:00.000Z";
    const again = reviseOutputSchema.parse(
      await mcp.call("revise", {
        predecessorId: revised.memory.id,
        memoryType: "commitment",
        topic: "audit",
        content: unique("Audit moved."),
        dueAt: newDue,
        owner: "bo",
      }),
    );
    expect(again.commitment).toMatchObject({ status: "waiting", dueAt: newDue, owner: "bo" });
    // The superseded version's commitment is history: moving it names the live one.
    expect(await mcp.callError("resolve", { memoryId: revised.memory.id, status: "resolved" })).toMatch(new RegExp(`^conflict: .*${again.memory.id}$`));
  });

  it("resolving a blocker archives it", async () => {
    const stored = rememberOutputSchema.parse(await mcp.call("remember", { memoryType: "blocker", topic: "ci", content: unique("CI runners are down.") }));
    const out = resolveOutputSchema.parse(await mcp.call("resolve", { memoryId: stored.memory.id, status: "resolved" }));
    expect(out).toEqual({ memoryId: stored.memory.id, commitmentId: stored.memory.id, status: "archived", previousStatus: "active" });
    const record = (await getMemories(mcp, [stored.memory.id])).get(stored.memory.id)!;
    expect(record.status).toBe("archived");
    expect(record.validTo).not.toBeNull();
  });

  it("another tenant's ids get exactly the unknown-id answer on revise and resolve", async () => {
    const commitment = rememberOutputSchema.parse(
      await mcp.call("remember", { memoryType: "commitment", topic: "iso", content: unique("Tenant A's promise.") }),
    );
    const id = commitment.memory.id;
    const reviseArgs = (predecessorId: string) => ({ predecessorId, memoryType: "note", topic: "t", content: unique("takeover") });
    const foreignRevise = await other.callError("revise", reviseArgs(id));
    const unknownRevise = await other.callError("revise", reviseArgs(UNKNOWN_ID));
    expect(foreignRevise).toMatch(/^not_found: /);
    expect(foreignRevise.replaceAll(id, "ID")).toBe(unknownRevise.replaceAll(UNKNOWN_ID, "ID"));
    const foreignResolve = await other.callError("resolve", { memoryId: id, status: "resolved" });
    const unknownResolve = await other.callError("resolve", { memoryId: UNKNOWN_ID, status: "resolved" });
    expect(foreignResolve).toMatch(/^not_found: /);
    expect(foreignResolve.replaceAll(id, "ID")).toBe(unknownResolve.replaceAll(UNKNOWN_ID, "ID"));
    const untouched = (await getMemories(mcp, [id])).get(id)!;
    expect(untouched).toMatchObject({ supersededBy: null, commitment: { status: "open" } });
  });
});

describe("REST lifecycle routes", () => {
  it("POST /memories/:id/revise answers 201 with the revise output; the id comes from the path only", async () => {
    const stored = rememberOutputSchema.parse(
      await (await rest("/api/v1/memories", { json: { memoryType: "preference", topic: "editor", content: unique("Prefers vim.") } })).json(),
    );
    const res = await rest(`/api/v1/memories/${stored.memory.id}/revise`, {
      json: { memoryType: "preference", topic: "editor", content: unique("Prefers helix now."), edgeIntent: "updates", tags: ["tools"] },
    });
    expect(res.status).toBe(201);
    const out = reviseOutputSchema.parse(await res.json());
    expect(out).toMatchObject({ predecessorId: stored.memory.id, edgeIntent: "updates", memory: { memoryType: "preference" } });

    const withId = await rest(`/api/v1/memories/${out.memory.id}/revise`, {
      json: { predecessorId: stored.memory.id, memoryType: "note", topic: "t", content: unique("x") },
    });
    expect(withId.status).toBe(400);
    expect(await withId.json()).toMatchObject({ error: "invalid_input", field: "predecessorId" });
    const bad = await rest(`/api/v1/memories/${out.memory.id}/revise`, {
      json: { memoryType: "note", topic: "t", content: unique("x"), edgeIntent: "derives" },
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: "invalid_input", field: "edgeIntent" });

    const late = await rest(`/api/v1/memories/${stored.memory.id}/revise`, { json: { memoryType: "note", topic: "t", content: unique("late") } });
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ error: "conflict", ids: { head: out.memory.id } });
  });

  it("POST /memories/:id/resolve moves a commitment and answers 409 for an illegal move", async () => {
    const stored = rememberOutputSchema.parse(
      await (await rest("/api/v1/memories", { json: { memoryType: "commitment", topic: "invoice", content: unique("Pay the invoice.") } })).json(),
    );
    const id = stored.memory.id;
    const resolved = await rest(`/api/v1/memories/${id}/resolve`, { json: { status: "resolved" } });
    expect(resolved.status).toBe(200);
    expect(resolveOutputSchema.parse(await resolved.json())).toEqual({
      memoryId: id,
      commitmentId: stored.commitment!.id,
      status: "resolved",
      previousStatus: "open",
    });
    const illegal = await rest(`/api/v1/memories/${id}/resolve`, { json: { status: "expired" } });
    expect(illegal.status).toBe(409);
    expect(await illegal.json()).toMatchObject({ error: "invalid_transition", detail: "resolved -> expired" });
    const reopened = await rest(`/api/v1/memories/${id}/resolve`, { json: { status: "open" } });
    expect(resolveOutputSchema.parse(await reopened.json())).toMatchObject({ status: "open", previousStatus: "resolved" });
    const withId = await rest(`/api/v1/memories/${id}/resolve`, { json: { memoryId: id, status: "open" } });
    expect(withId.status).toBe(400);
    expect(await withId.json()).toMatchObject({ error: "invalid_input", field: "memoryId" });
  });

  it("POST /memories/:id/archive archives once; GET /memories/:id/history shows lineage, edges and events", async () => {
    const stored = rememberOutputSchema.parse(
      await (await rest("/api/v1/memories", { json: { memoryType: "note", topic: "wiki", content: unique("The wiki lives in Notion.") } })).json(),
    );
    const revised = reviseOutputSchema.parse(
      await (
        await rest(`/api/v1/memories/${stored.memory.id}/revise`, {
          json: { memoryType: "note", topic: "wiki", content: unique("The wiki moved to the repo.") },
        })
      ).json(),
    );
    const archived = await rest(`/api/v1/memories/${revised.memory.id}/archive`, { method: "POST" });
    expect(archived.status).toBe(200);
    expect(archiveOutputSchema.parse(await archived.json())).toEqual({ id: revised.memory.id, status: "archived" });
    const again = await rest(`/api/v1/memories/${revised.memory.id}/archive`, { method: "POST" });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: "conflict" });
    const superseded = await rest(`/api/v1/memories/${stored.memory.id}/archive`, { method: "POST" });
    expect(superseded.status).toBe(409);
    expect(await superseded.json()).toMatchObject({ error: "conflict", ids: { head: revised.memory.id } });

    const res = await rest(`/api/v1/memories/${stored.memory.id}/history`);
    expect(res.status).toBe(200);
    const history = historyOutputSchema.parse(await res.json());
    expect(history.memoryId).toBe(stored.memory.id);
    expect(history.lifecycleState).toBe("superseded");
    expect(history.lineage.map((m) => [m.id, m.status, m.supersededBy])).toEqual([
      [stored.memory.id, "active", revised.memory.id],
      [revised.memory.id, "archived", null],
    ]);
    expect(history.edges).toEqual([{ fromId: revised.memory.id, toId: stored.memory.id, edgeType: "supersedes", recordedAt: expect.any(String) }]);
    expect(history.events.map((e) => [e.memoryId, e.kind])).toEqual([
      [stored.memory.id, "create"],
      [revised.memory.id, "create"],
      [revised.memory.id, "revise"],
      [stored.memory.id, "supersede"],
      [revised.memory.id, "archive"],
    ]);
    expect(history.events[2]!.payload).toEqual({ predecessorId: stored.memory.id, edgeType: "supersedes" });
    const head = historyOutputSchema.parse(await (await rest(`/api/v1/memories/${revised.memory.id}/history`)).json());
    expect(head.lifecycleState).toBe("archived");
  });

  it("malformed ids are 404 on every lifecycle route, like unknown ones", async () => {
    const routes = [
      { path: "revise", json: { memoryType: "note", topic: "t", content: "c" } },
      { path: "resolve", json: { status: "resolved" } },
      { path: "archive", method: "POST" },
      { path: "history" },
    ];
    for (const route of routes) {
      for (const id of ["not-a-uuid", UNKNOWN_ID]) {
        const res = await rest(`/api/v1/memories/${id}/${route.path}`, route);
        expect(res.status, `${route.path} ${id}`).toBe(404);
        expect(await res.json()).toMatchObject({ error: "not_found" });
      }
    }
  });

  it("archive needs memory:write; history needs only memory:read", async () => {
    const ro = await createTenantWithKey(core.ownerPool, { tenantName: "lifecycle read-only", scopes: ["memory:read"] });
    const res = await rest(`/api/v1/memories/${UNKNOWN_ID}/archive`, { method: "POST", key: ro.apiKey });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: "insufficient_scope" });
    expect((await rest(`/api/v1/memories/${UNKNOWN_ID}/history`, { key: ro.apiKey })).status).toBe(404);
  });

  it("another tenant's ids get exactly the unknown-id answer (status and body) on every route", async () => {
    const stored = rememberOutputSchema.parse(
      await (await rest("/api/v1/memories", { json: { memoryType: "commitment", topic: "iso", content: unique("Tenant A only.") } })).json(),
    );
    const blocker = rememberOutputSchema.parse(
      await (await rest("/api/v1/memories", { json: { memoryType: "blocker", topic: "iso", content: unique("Tenant A's blocker.") } })).json(),
    );
    const routes = [
      { path: "revise", json: { memoryType: "note", topic: "t", content: unique("takeover") } },
      { path: "resolve", json: { status: "resolved" } },
      { path: "archive", method: "POST" },
      { path: "history" },
    ];
    for (const mine of [stored.memory.id, blocker.memory.id]) {
      for (const route of routes) {
        const foreign = await restAnswer(await rest(`/api/v1/memories/${mine}/${route.path}`, { ...route, key: tenantB.apiKey }), mine);
        const unknown = await restAnswer(await rest(`/api/v1/memories/${UNKNOWN_ID}/${route.path}`, { ...route, key: tenantB.apiKey }), UNKNOWN_ID);
        expect(foreign.status, route.path).toBe(404);
        expect(foreign, route.path).toEqual(unknown);
      }
    }
    // Tenant A's memories are untouched.
    const history = historyOutputSchema.parse(await (await rest(`/api/v1/memories/${stored.memory.id}/history`)).json());
    expect(history).toMatchObject({ lifecycleState: "current", lineage: [{ id: stored.memory.id, commitment: { status: "open" } }] });
    expect(history.events.map((e) => e.kind)).toEqual(["create"]);
    const blockerHistory = historyOutputSchema.parse(await (await rest(`/api/v1/memories/${blocker.memory.id}/history`)).json());
    expect(blockerHistory.lifecycleState).toBe("current");
  });
});
