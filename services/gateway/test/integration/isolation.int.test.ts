/**
 * Tenant isolation on every surface that takes an id: tenant B presenting tenant A's ids must get
 * exactly the answer an unknown id gets — same status, same body (request ids aside), same MCP
 * text — and A's data must be unchanged afterwards. One table drives every tool and route, so a
 * new id-taking surface is one row away from being covered.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { connectMcp, type McpConnection } from "../../../../test/support/mcp.js";
import type { RunningGateway } from "../../src/gateway.js";
import { startTestGateway } from "../support/gateway.js";

type Tenant = { tenantId: string; userId: string; apiKey: string };

const UNKNOWN = "0190c0de-0000-7000-8000-00000000beef";

let core: CoreServices;
let gateway: RunningGateway;
let tenantA: Tenant;
let tenantB: Tenant;
let mcpA: McpConnection;
let mcpB: McpConnection;
/** A's memories by role: each surface gets an id it would accept from A. */
const ids = { note: "", commitment: "", blocker: "", revisable: "" };

beforeAll(async () => {
  core = await startCoreServices({ label: "isolation" });
  tenantA = await core.createTenant("isolation a");
  tenantB = await core.createTenant("isolation b");
  gateway = await startTestGateway({ memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk });
  mcpA = await connectMcp(`${gateway.url}/mcp`, tenantA.apiKey);
  mcpB = await connectMcp(`${gateway.url}/mcp`, tenantB.apiKey);
  const remember = async (args: Record<string, unknown>) => (await mcpA.call<{ memory: { id: string } }>("remember", args)).memory.id;
  ids.note = await remember({ memoryType: "note", topic: "isolation note", content: "Tenant A's private note about the launch date." });
  ids.commitment = await remember({
    memoryType: "commitment",
    topic: "isolation promise",
    content: "Tenant A promised the audit report.",
    dueAt: "2030-01-01T00:00:00Z",
    owner: "ana",
  });
  ids.blocker = await remember({ memoryType: "blocker", topic: "isolation blocker", content: "Tenant A is blocked on the vendor contract." });
  ids.revisable = await remember({ memoryType: "decision", topic: "isolation decision", content: "Tenant A decided to ship on Tuesday." });
}, 120_000);

afterAll(async () => {
  await mcpA?.close();
  await mcpB?.close();
  await gateway?.close();
  await core?.close();
});

async function restAs(tenant: Tenant, method: string, path: string, json?: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${tenant.apiKey}`, ...(json !== undefined ? { "Content-Type": "application/json" } : {}) },
    ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: compare the text
  }
  return { status: response.status, body: withoutRequestIds(body) };
}

function withoutRequestIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutRequestIds);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => k !== "request_id")
        .map(([k, v]) => [k, withoutRequestIds(v)]),
    );
  }
  return typeof value === "string" ? value.replace(/request [0-9a-f-]{36}/g, "request <id>") : value;
}

/** Replaces the id under test with a placeholder, so a foreign and an unknown answer compare equal when they say the same. */
function normalise(value: unknown, id: string): unknown {
  return JSON.parse(JSON.stringify(value).split(id).join("<id>"));
}

async function mcpAs(connection: McpConnection, tool: string, args: Record<string, unknown>): Promise<unknown> {
  const result = await connection.client.callTool({ name: tool, arguments: args });
  return withoutRequestIds({ isError: result.isError ?? false, content: result.content, structuredContent: result.structuredContent ?? null });
}

type Surface = { name: string; role: keyof typeof ids; call: (id: string) => Promise<unknown> };

const surfaces: Surface[] = [
  { name: "MCP get_memories", role: "note", call: (id) => mcpAs(mcpB, "get_memories", { ids: [id] }) },
  {
    name: "MCP revise",
    role: "revisable",
    call: (id) => mcpAs(mcpB, "revise", { predecessorId: id, memoryType: "decision", topic: "hijack", content: `B tries to revise ${Math.random()}` }),
  },
  { name: "MCP resolve (commitment)", role: "commitment", call: (id) => mcpAs(mcpB, "resolve", { memoryId: id, status: "resolved" }) },
  { name: "MCP resolve (blocker)", role: "blocker", call: (id) => mcpAs(mcpB, "resolve", { memoryId: id, status: "resolved" }) },
  { name: "REST GET /memories/:id", role: "note", call: (id) => restAs(tenantB, "GET", `/api/v1/memories/${id}`) },
  { name: "REST GET /memories/:id/history", role: "revisable", call: (id) => restAs(tenantB, "GET", `/api/v1/memories/${id}/history`) },
  {
    name: "REST POST /memories/:id/revise",
    role: "revisable",
    call: (id) =>
      restAs(tenantB, "POST", `/api/v1/memories/${id}/revise`, { memoryType: "decision", topic: "hijack", content: `B tries again ${Math.random()}` }),
  },
  {
    name: "REST POST /memories/:id/resolve",
    role: "commitment",
    call: (id) => restAs(tenantB, "POST", `/api/v1/memories/${id}/resolve`, { status: "waiting" }),
  },
  { name: "REST POST /memories/:id/archive", role: "note", call: (id) => restAs(tenantB, "POST", `/api/v1/memories/${id}/archive`) },
];

describe("tenant isolation: a foreign id is an unknown id", () => {
  for (const surface of surfaces) {
    it(surface.name, async () => {
      const foreignId = ids[surface.role];
      const foreign = normalise(await surface.call(foreignId), foreignId);
      const unknown = normalise(await surface.call(UNKNOWN), UNKNOWN);
      expect(foreign).toEqual(unknown);
      // And the answer really is "not found", not some other refusal that happens to match.
      expect(JSON.stringify(foreign)).toMatch(/not_?found|notFound/i);
    });
  }

  it("leaves A's memories untouched and invisible to B's reads", async () => {
    const mine = await mcpA.call<{ memories: Array<{ id: string; status: string; supersededBy: string | null; commitment: { status: string } | null }> }>(
      "get_memories",
      { ids: Object.values(ids) },
    );
    expect(mine.memories).toHaveLength(4);
    for (const m of mine.memories) {
      expect(m.status).toBe("active");
      expect(m.supersededBy).toBeNull();
    }
    expect(mine.memories.find((m) => m.id === ids.commitment)?.commitment?.status).toBe("open");
    const searched = await mcpB.call<{ hits: Array<{ id: string }> }>("search", { query: "Tenant A launch vendor audit Tuesday", limit: 25 });
    expect(searched.hits.map((h) => h.id).filter((id) => Object.values(ids).includes(id))).toEqual([]);
    const listed = await restAs(tenantB, "GET", "/api/v1/memories?limit=100");
    expect(JSON.stringify(listed.body)).not.toMatch(/Tenant A/);
    const facets = await restAs(tenantB, "GET", "/api/v1/memories/facets");
    expect(facets.status).toBe(200);
  });

  it("records which surface wrote each memory on its audit events", async () => {
    const viaRest = await restAs(tenantA, "POST", "/api/v1/memories", {
      memoryType: "note",
      topic: "surface",
      content: "Written over REST for the audit check.",
    });
    const restId = (viaRest.body as { memory: { id: string } }).memory.id;
    const { rows } = await core.ownerPool.query<{ memory_id: string; actor_kind: string }>(
      "SELECT memory_id, actor_kind FROM memory_events WHERE memory_id = ANY($1::uuid[]) AND event_kind = 'create'",
      [[ids.note, restId]],
    );
    expect(Object.fromEntries(rows.map((r) => [r.memory_id, r.actor_kind]))).toEqual({ [ids.note]: "user_mcp", [restId]: "user_api" });
  });
});
