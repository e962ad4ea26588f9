/**
 * Scopes end to end through a real gateway over the real memory and search services:
 * configure_scope through the official MCP client in every protocol era, the alias/mapping/rename/
 * delete scenario across remember, get_memories, search and listing, and the REST routes
 * (/api/v1/scopes, /api/v1/memories, /api/v1/memories/facets) with their refusals.
 */
import { randomUUID } from "node:crypto";
import { createTenantWithKey, type CreatedTenant } from "@3ngram/memory";
import { SCOPES } from "@3ngram/rpc";
import {
  configureScopeOutputSchema,
  facetsOutputSchema,
  getMemoriesOutputSchema,
  listMemoriesOutputSchema,
  rememberOutputSchema,
  searchOutputSchema,
  type ConfigureScopeOutput,
  type ListMemoriesOutput,
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

beforeAll(async () => {
  core = await startCoreServices({ label: "gateway-scopes" });
  tenantA = await core.createTenant("scopes gateway a");
  tenantB = await core.createTenant("scopes gateway b");
  readOnly = await createTenantWithKey(core.ownerPool, { tenantName: "scopes read-only", scopes: [SCOPES.read] });
  gateway = await startTestGateway({ memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk });
});
afterAll(async () => {
  await gateway?.close();
  await core?.close();
});

const configure = async (client: Client, args: Record<string, unknown>): Promise<ConfigureScopeOutput> =>
  configureScopeOutputSchema.parse(structured(await callTool(client, "configure_scope", args)));

const remember = async (client: Client, args: Record<string, unknown>) =>
  rememberOutputSchema.parse(structured(await callTool(client, "remember", { memoryType: "note", topic: "scoped", ...args })));

const searchIds = async (client: Client, args: Record<string, unknown>) =>
  searchOutputSchema.parse(structured(await callTool(client, "search", { limit: 25, ...args }))).hits.map((h) => h.id);

const get = (path: string, key = tenantA.apiKey) => fetch(`${gateway.url}${path}`, { headers: { Authorization: `Bearer ${key}` } });
const post = (path: string, json: unknown, key = tenantA.apiKey) =>
  fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify(json),
  });

async function listRest(query: string, key = tenantA.apiKey): Promise<ListMemoriesOutput> {
  const res = await get(`/api/v1/memories${query}`, key);
  expect(res.status, await res.clone().text()).toBe(200);
  return listMemoriesOutputSchema.parse(await res.json());
}

describe("configure_scope over MCP", () => {
  it("is advertised as the one destructive tool, with a per-action object schema", async () => {
    const client = await connect(gateway.url, tenantA.apiKey, ERAS[0]);
    const { tools } = await client.listTools();
    await client.close();
    const tool = tools.find((t) => t.name === "configure_scope");
    expect(tool).toBeDefined();
    expect(tool!.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false });
    expect(tools.filter((t) => t.annotations?.destructiveHint === true).map((t) => t.name)).toEqual(["configure_scope"]);
    expect(tool!.title).toBeTruthy();
    expect((tool!.description ?? "").length).toBeGreaterThan(200);
    // One flat, closed object (model APIs refuse a composed root): action is an enum, the rest optional.
    const input = tool!.inputSchema as { type: string; properties: Record<string, { enum?: string[] }>; required: string[]; additionalProperties: unknown };
    expect(input).not.toHaveProperty("oneOf");
    expect(input).toMatchObject({ type: "object", required: ["action"], additionalProperties: false });
    expect(input.properties.action?.enum?.sort()).toEqual(["create", "delete", "list", "rename", "set_aliases", "set_mappings", "set_retrieval_default"]);
    expect(Object.keys(input.properties).sort()).toEqual(["action", "aliases", "mode", "name", "newName", "projects", "scope"]);
    expect((tool!.outputSchema as { type: string }).type).toBe("object");
  });

  it.each(ERAS)("every action works from the official client ($name)", async (era) => {
    const client = await connect(gateway.url, tenantA.apiKey, era);
    const tag = randomUUID().slice(0, 8);
    const name = `era-${tag}`;
    try {
      const created = await configure(client, { action: "create", name, aliases: [`era-alias-${tag}`] });
      expect(created).toMatchObject({ action: "upserted", scope: { name, aliases: [`era-alias-${tag}`], projects: [] } });
      expect(Number.isNaN(Date.parse(created.scope!.createdAt))).toBe(false);
      const aliases = await configure(client, { action: "set_aliases", name, aliases: [`era-a-${tag}`, `era-b-${tag}`] });
      expect(aliases.scope?.aliases).toEqual([`era-a-${tag}`, `era-b-${tag}`]);
      const mapped = await configure(client, { action: "set_mappings", name, projects: [`project ${tag}`] });
      expect(mapped.scope?.projects).toEqual([`project ${tag}`]);
      const renamed = await configure(client, { action: "rename", name, newName: `${name}-x` });
      expect(renamed.scope).toMatchObject({ name: `${name}-x`, aliases: [`era-a-${tag}`, `era-b-${tag}`, name] });
      const policy = await configure(client, { action: "set_retrieval_default", mode: "default", scope: `era-a-${tag}` });
      expect(policy).toEqual({ action: "retrieval_default_set", policy: { mode: "default", scope: `${name}-x` } });
      const listed = await configure(client, { action: "list" });
      expect(listed.action).toBe("list");
      expect(listed.count).toBe(listed.scopes!.length);
      expect(listed.scopes!.map((s) => s.name)).toContain(`${name}-x`);
      expect(listed.policy).toEqual({ mode: "default", scope: `${name}-x` });
      const deleted = await configure(client, { action: "delete", name: `${name}-x` });
      expect(deleted).toEqual({ action: "deleted", name: `${name}-x`, policy: { mode: "require", scope: null } });
      const off = await configure(client, { action: "set_retrieval_default", mode: "off" });
      expect(off.policy).toEqual({ mode: "off", scope: null });
    } finally {
      await client.close();
    }
  });

  it("refuses bad input naming the field, conflicts and unknown names", async () => {
    const client = await connect(gateway.url, tenantA.apiKey, ERAS[1]);
    try {
      // Arguments the schema refuses are isError results naming the field (SEP-1303).
      const refused = async (args: Record<string, unknown>) => (await invalidArguments(callTool(client, "configure_scope", args))).data?.field;
      expect(await refused({ action: "create", name: "Not Kebab" })).toBe("name");
      // Each action is held to its own fields: a missing one is required, another action's is not accepted.
      const missing = await invalidArguments(callTool(client, "configure_scope", { action: "rename", name: "work" }));
      expect(missing.message).toBe('invalid_input: newName: required with action "rename"');
      const foreign = await invalidArguments(callTool(client, "configure_scope", { action: "list", name: "work" }));
      expect(foreign.message).toBe('invalid_input: name: not accepted with action "list"');
      expect(await refused({ action: "explode" })).toBe("action");
      expect(await refused({ action: "list", extra: 1 })).toBe("extra");
      expect(await refused({ action: "set_retrieval_default", mode: "default" })).toBe("scope");
      expect(errorText(await callTool(client, "configure_scope", { action: "create", name: "work" }))).toMatch(
        /^conflict: name: a scope is already named "work"/,
      );
      expect(errorText(await callTool(client, "configure_scope", { action: "delete", name: "nowhere-at-all" }))).toMatch(/^not_found: /);
    } finally {
      await client.close();
    }
  });

  it("lets a read-only key list but not change the registry", async () => {
    const client = await connect(gateway.url, readOnly.apiKey, ERAS[1]);
    try {
      const listed = await configure(client, { action: "list" });
      expect(listed.scopes!.map((s) => s.name)).toEqual(["personal", "work"]);
      for (const args of [
        { action: "create", name: "nope" },
        { action: "rename", name: "work", newName: "job" },
        { action: "set_aliases", name: "work", aliases: ["job"] },
        { action: "set_mappings", name: "work", projects: ["p"] },
        { action: "delete", name: "work" },
        { action: "set_retrieval_default", mode: "require" },
      ]) {
        expect(errorText(await callTool(client, "configure_scope", args))).toBe("insufficient_scope: memory:write required");
      }
      expect((await configure(client, { action: "list" })).scopes!.map((s) => s.name)).toEqual(["personal", "work"]);
    } finally {
      await client.close();
    }
  });
});

describe("the scope scenario through the official MCP client", () => {
  let client: Client;
  const marker = `lighthouse${randomUUID().slice(0, 8)}`;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    client = await connect(gateway.url, tenantA.apiKey, ERAS[1]);
  });
  afterAll(async () => {
    await client?.close();
  });

  it("a write to an alias lands in the canonical scope and reads by alias find it", async () => {
    const created = await configure(client, { action: "create", name: "harbour-ops", aliases: ["harbour", "port"] });
    expect(created.scope).toMatchObject({ name: "harbour-ops", aliases: ["harbour", "port"] });
    const stored = await remember(client, { content: `The ${marker} lamp is serviced every spring.`, scope: "harbour" });
    expect(stored.memory.scope).toBe("harbour-ops");
    ids.viaAlias = stored.memory.id;
    const read = getMemoriesOutputSchema.parse(structured(await callTool(client, "get_memories", { ids: [stored.memory.id] })));
    expect(read.memories[0]?.scope).toBe("harbour-ops");
    const elsewhere = await remember(client, { content: `A ${marker} postcard sits on the desk.`, scope: "personal" });
    ids.elsewhere = elsewhere.memory.id;
    for (const scope of ["harbour", "port", "harbour-ops"]) {
      expect(await searchIds(client, { query: marker, scope })).toEqual([ids.viaAlias]);
      expect((await listRest(`?scope=${scope}`)).memories.map((m) => m.id)).toEqual([ids.viaAlias]);
    }
    expect((await searchIds(client, { query: marker })).sort()).toEqual([ids.viaAlias, ids.elsewhere].sort());
  });

  it("a write with only a mapped project lands in the mapped scope", async () => {
    const mapped = await configure(client, { action: "set_mappings", name: "harbour-ops", projects: ["breakwater"] });
    expect(mapped.scope?.projects).toEqual(["breakwater"]);
    const stored = await remember(client, { content: `The ${marker} breakwater needs new stones.`, project: "breakwater" });
    expect(stored.memory).toMatchObject({ scope: "harbour-ops", project: "breakwater" });
    ids.viaProject = stored.memory.id;
    const unmapped = await remember(client, { content: `The ${marker} tide table is pinned up.`, project: "tides" });
    expect(unmapped.memory.scope).toBe("personal");
    ids.unmapped = unmapped.memory.id;
    expect((await searchIds(client, { query: marker, scope: "port" })).sort()).toEqual([ids.viaAlias, ids.viaProject].sort());
  });

  it("a rename keeps the old memories reachable under the new name", async () => {
    const renamed = await configure(client, { action: "rename", name: "harbour-ops", newName: "marina" });
    expect(renamed.scope).toMatchObject({ name: "marina", aliases: ["harbour", "port", "harbour-ops"], projects: ["breakwater"] });
    const after = await remember(client, { content: `The ${marker} marina office opens at eight.`, scope: "marina" });
    ids.afterRename = after.memory.id;
    const expected = [ids.viaAlias, ids.viaProject, ids.afterRename].sort();
    for (const scope of ["marina", "harbour-ops", "harbour"]) {
      expect((await searchIds(client, { query: marker, scope })).sort(), scope).toEqual(expected);
      expect((await listRest(`?scope=${scope}`)).memories.map((m) => m.id).sort(), scope).toEqual(expected);
    }
    // The stored rows keep the scope text they were written with.
    const read = getMemoriesOutputSchema.parse(structured(await callTool(client, "get_memories", { ids: [ids.viaAlias, ids.afterRename] })));
    expect(Object.fromEntries(read.memories.map((m) => [m.id, m.scope]))).toEqual({ [ids.viaAlias!]: "harbour-ops", [ids.afterRename!]: "marina" });
  });

  it("deleting the default scope flips the retrieval policy to require", async () => {
    const set = await configure(client, { action: "set_retrieval_default", mode: "default", scope: "port" });
    expect(set.policy).toEqual({ mode: "default", scope: "marina" });
    const deleted = await configure(client, { action: "delete", name: "marina" });
    expect(deleted).toEqual({ action: "deleted", name: "marina", policy: { mode: "require", scope: null } });
    const listed = await configure(client, { action: "list" });
    expect(listed.policy).toEqual({ mode: "require", scope: null });
    expect(listed.scopes!.map((s) => s.name)).not.toContain("marina");
    // The memories are untouched and keep their stored scope text.
    expect((await listRest(`?scope=marina`)).memories.map((m) => m.id)).toEqual([ids.afterRename]);
    await configure(client, { action: "set_retrieval_default", mode: "off" });
  });
});

describe("REST /api/v1/scopes", () => {
  it("lists the registry with the policy and takes any configure_scope action", async () => {
    const c = await get("/api/v1/scopes", tenantB.apiKey);
    expect(c.status).toBe(200);
    const listed = configureScopeOutputSchema.parse(await c.json());
    expect(listed).toMatchObject({ action: "list", count: 2, policy: { mode: "off", scope: null } });
    expect(listed.scopes!.map((s) => s.name)).toEqual(["personal", "work"]);

    const created = await post("/api/v1/scopes", { action: "create", name: "rest-scope", aliases: ["rs"] }, tenantB.apiKey);
    expect(created.status).toBe(201);
    expect(configureScopeOutputSchema.parse(await created.json()).scope).toMatchObject({ name: "rest-scope", aliases: ["rs"] });
    const aliased = await post("/api/v1/scopes", { action: "set_aliases", name: "rest-scope", aliases: [] }, tenantB.apiKey);
    expect(aliased.status).toBe(200);
    expect(configureScopeOutputSchema.parse(await aliased.json()).scope?.aliases).toEqual([]);
    const listedByPost = await post("/api/v1/scopes", { action: "list" }, tenantB.apiKey);
    expect(configureScopeOutputSchema.parse(await listedByPost.json()).count).toBe(3);
  });

  it("answers refusals with the reason's status, naming the field", async () => {
    const cases: Array<[unknown, number, string, string | undefined]> = [
      [{ action: "create", name: "Bad Name" }, 400, "invalid_input", "name"],
      [{ action: "set_aliases", name: "work", aliases: Array.from({ length: 17 }, (_, i) => `a${i}`) }, 400, "invalid_input", "aliases"],
      [{ action: "teleport" }, 400, "invalid_input", "action"],
      [{ action: "create", name: "personal" }, 409, "conflict", "name"],
      [{ action: "rename", name: "ghost", newName: "spirit" }, 404, "not_found", "name"],
      [{ action: "set_retrieval_default", mode: "default", scope: "ghost" }, 404, "not_found", "scope"],
    ];
    for (const [body, status, error, field] of cases) {
      const res = await post("/api/v1/scopes", body, tenantB.apiKey);
      const json = (await res.json()) as { error: string; field?: string };
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(json.error).toBe(error);
      expect(json.field).toBe(field);
    }
    const ro = await post("/api/v1/scopes", { action: "create", name: "nope" }, readOnly.apiKey);
    expect(ro.status).toBe(403);
    expect((await post("/api/v1/scopes", { action: "list" }, readOnly.apiKey)).status).toBe(200);
    expect((await get("/api/v1/scopes", "3ng_not_a_key")).status).toBe(401);
  });
});

describe("REST listing and facets", () => {
  let tenant: CreatedTenant;
  const made: Record<string, { id: string; recordedAt: string }> = {};

  beforeAll(async () => {
    tenant = await createTenantWithKey(core.ownerPool, { tenantName: "listing rest" });
    await post("/api/v1/scopes", { action: "create", name: "garden", aliases: ["yard"] }, tenant.apiKey);
    const specs: Array<[string, Record<string, unknown>]> = [
      ["d1", { memoryType: "decision", scope: "work", project: "apollo" }],
      ["f1", { memoryType: "fact", scope: "yard", project: "gemini" }],
      ["n1", { memoryType: "note", scope: "personal" }],
      ["d2", { memoryType: "decision", scope: "personal", project: "apollo" }],
      ["b1", { memoryType: "blocker", scope: "work", project: "mercury" }],
      ["gone", { memoryType: "note", scope: "archived-only", project: "hidden" }],
    ];
    for (const [key, fields] of specs) {
      const res = await post("/api/v1/memories", { topic: key, content: `listing memory ${key} ${randomUUID()}`, ...fields }, tenant.apiKey);
      expect(res.status).toBe(201);
      const out = rememberOutputSchema.parse(await res.json());
      made[key] = { id: out.memory.id, recordedAt: "" };
    }
    expect((await post(`/api/v1/memories/${made.gone!.id}/archive`, {}, tenant.apiKey)).status).toBe(200);
    const all = await listRest("?limit=100", tenant.apiKey);
    for (const m of all.memories) {
      const key = Object.keys(made).find((k) => made[k]!.id === m.id)!;
      made[key]!.recordedAt = m.recordedAt;
    }
  });

  const ids = (...keys: string[]) => keys.map((k) => made[k]!.id);
  const list = (query: string) => listRest(query, tenant.apiKey);

  it("lists live memories newest first with count and total", async () => {
    const all = await list("");
    expect(all.memories.map((m) => m.id)).toEqual(ids("b1", "d2", "n1", "f1", "d1"));
    expect(all).toMatchObject({ count: 5, total: 5 });
    expect(all.memories[0]).toMatchObject({
      memoryType: "blocker",
      topic: "b1",
      scope: "work",
      project: "mercury",
      status: "active",
      supersededBy: null,
      commitment: null,
    });
    const page = await list("?limit=2&offset=2");
    expect(page.memories.map((m) => m.id)).toEqual(ids("n1", "f1"));
    expect(page).toMatchObject({ count: 2, total: 5 });
  });

  it("applies each filter, repeated keys included", async () => {
    expect((await list("?type=decision")).memories.map((m) => m.id)).toEqual(ids("d2", "d1"));
    expect((await list("?memoryTypes=decision&memoryTypes=blocker")).memories.map((m) => m.id)).toEqual(ids("b1", "d2", "d1"));
    expect((await list("?memoryTypes=fact")).memories.map((m) => m.id)).toEqual(ids("f1"));
    expect((await list("?scope=garden")).memories.map((m) => m.id)).toEqual(ids("f1"));
    expect((await list("?scope=yard")).memories.map((m) => m.id)).toEqual(ids("f1"));
    expect((await list("?project=apollo")).memories.map((m) => m.id)).toEqual(ids("d2", "d1"));
    expect((await list("?project=apollo&project=mercury")).memories.map((m) => m.id)).toEqual(ids("b1", "d2", "d1"));
    expect((await list("?project=apollo&project=gemini&scope=work")).memories.map((m) => m.id)).toEqual(ids("d1"));
    const archived = await list("?status=archived");
    expect(archived.memories.map((m) => m.id)).toEqual(ids("gone"));
    expect(archived.memories[0]?.status).toBe("archived");
    const total = await list("?scope=work&limit=1");
    expect(total).toMatchObject({ count: 1, total: 2 });
  });

  it("filters by recorded time with inclusive bounds", async () => {
    const window = await list(`?recordedAfter=${made.n1!.recordedAt}&recordedBefore=${made.b1!.recordedAt}`);
    const got = window.memories.map((m) => m.id);
    expect(got).toContain(made.n1!.id);
    expect(got).toContain(made.b1!.id);
    expect(got).not.toContain(made.d1!.id);
    for (const m of window.memories) {
      expect(m.recordedAt >= made.n1!.recordedAt && m.recordedAt <= made.b1!.recordedAt).toBe(true);
    }
    const exact = await list(`?recordedAfter=${made.f1!.recordedAt}&recordedBefore=${made.f1!.recordedAt}`);
    expect(exact.memories.map((m) => m.id)).toContain(made.f1!.id);
    const later = await list(`?recordedAfter=2999-01-01T00:00:00Z`);
    expect(later).toMatchObject({ count: 0, total: 0 });
  });

  it("answers 400 naming the field for bad filters", async () => {
    const cases: Array<[string, string]> = [
      ["?limit=0", "limit"],
      ["?limit=101", "limit"],
      ["?limit=ten", "limit"],
      ["?offset=-1", "offset"],
      ["?recordedAfter=2026-02-01T00:00:00Z&recordedBefore=2026-01-01T00:00:00Z", "recordedBefore"],
      ["?recordedAfter=yesterday", "recordedAfter"],
      ["?type=note&memoryTypes=fact", "memoryTypes"],
      ["?type=gossip", "type"],
      ["?status=deleted", "status"],
      ["?scope=Not%20Kebab", "scope"],
      ["?scope=work&scope=personal", "scope"],
      ["?colour=blue", "colour"],
    ];
    for (const [query, field] of cases) {
      const res = await get(`/api/v1/memories${query}`, tenant.apiKey);
      const body = (await res.json()) as { error: string; field?: string };
      expect(res.status, query).toBe(400);
      expect(body, query).toMatchObject({ error: "invalid_input", field });
    }
  });

  it("facets list the distinct scopes and projects of live memories, sorted", async () => {
    const res = await get("/api/v1/memories/facets", tenant.apiKey);
    expect(res.status).toBe(200);
    expect(facetsOutputSchema.parse(await res.json())).toEqual({ scopes: ["garden", "personal", "work"], projects: ["apollo", "gemini", "mercury"] });
    expect((await get("/api/v1/memories/facets", "3ng_not_a_key")).status).toBe(401);
  });

  it("never shows or changes one tenant's data for another", async () => {
    const asB = await listRest("?limit=100", tenantB.apiKey);
    expect(asB.memories.map((m) => m.id).filter((id) => Object.values(made).some((m) => m.id === id))).toEqual([]);
    const facetsB = facetsOutputSchema.parse(await (await get("/api/v1/memories/facets", tenantB.apiKey)).json());
    expect(facetsB.scopes).not.toContain("garden");
    expect(facetsB.projects).not.toContain("mercury");
    // B's view of A's scope names is the same as of names that exist nowhere.
    for (const name of ["garden", "never-was"]) {
      const res = await post("/api/v1/scopes", { action: "rename", name, newName: "taken-over" }, tenantB.apiKey);
      expect(res.status).toBe(404);
      const body = (await res.json()) as { detail: string };
      expect(body.detail.replace(name, "NAME")).toBe('name: no scope is named "NAME"');
    }
    // B's alias "yard" is its own: B's writes and reads do not resolve through A's registry.
    const bWrite = await post("/api/v1/memories", { memoryType: "note", topic: "b", content: `tenant b yard ${randomUUID()}`, scope: "yard" }, tenantB.apiKey);
    expect(rememberOutputSchema.parse(await bWrite.json()).memory.scope).toBe("yard");
    expect((await listRest("?scope=garden", tenantB.apiKey)).total).toBe(0);
    // A's registry is unchanged.
    const aScopes = configureScopeOutputSchema.parse(await (await get("/api/v1/scopes", tenant.apiKey)).json());
    expect(aScopes.scopes!.find((s) => s.name === "garden")?.aliases).toEqual(["yard"]);
  });
});
