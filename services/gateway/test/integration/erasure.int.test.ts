/**
 * Erasure through a real gateway over the real memory and search services: the REST routes and
 * who may call them (only a credential holding memory:erase, which neither a default key nor an
 * OAuth grant that did not name it holds), tenant isolation (another tenant's id answers exactly
 * like an unknown one), what the other surfaces show afterwards (REST, get_memories and history),
 * and the MCP surface staying at its 11 tools.
 */
import { issueApiKey } from "@3ngram/memory";
import { SCOPES } from "@3ngram/rpc";
import { ERASED_MARKER, eraseOutputSchema, getMemoriesOutputSchema, historyOutputSchema, memoryRecordSchema, rememberOutputSchema } from "@3ngram/schema";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { obtainTokens } from "../../../../test/support/oauth.js";
import type { RunningGateway } from "../../src/gateway.js";
import { startTestGateway } from "../support/gateway.js";
import { ERAS, callTool, connect, structured } from "../support/mcp-client.js";

type Tenant = { tenantId: string; userId: string; apiKey: string };

let core: CoreServices;
let gateway: RunningGateway;
let tenantA: Tenant;
let tenantB: Tenant;
let eraseKeyA: string;
let eraseKeyB: string;
let readOnlyA: string;
let mcp: Client;

const post = (path: string, key: string, body?: unknown) =>
  fetch(`${gateway.url}/api/v1${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
const get = (path: string, key: string) => fetch(`${gateway.url}/api/v1${path}`, { headers: { Authorization: `Bearer ${key}` } });

async function remember(key: string, content: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await post("/memories", key, { memoryType: "note", topic: "erasure gateway", content, ...extra });
  expect(res.status).toBe(201);
  return rememberOutputSchema.parse(await res.json()).memory.id;
}

async function contentOf(id: string, key = tenantA.apiKey): Promise<string> {
  return memoryRecordSchema.parse(await (await get(`/memories/${id}`, key)).json()).content;
}

beforeAll(async () => {
  core = await startCoreServices({ label: "gateway-erasure" });
  tenantA = await core.createTenant("erasure gateway a");
  tenantB = await core.createTenant("erasure gateway b");
  const scopes = [SCOPES.read, SCOPES.write, SCOPES.erase];
  eraseKeyA = (await issueApiKey(core.ownerPool, { tenantId: tenantA.tenantId, name: "erase a", scopes })).apiKey;
  eraseKeyB = (await issueApiKey(core.ownerPool, { tenantId: tenantB.tenantId, name: "erase b", scopes })).apiKey;
  readOnlyA = (await issueApiKey(core.ownerPool, { tenantId: tenantA.tenantId, name: "read a", scopes: [SCOPES.read] })).apiKey;
  gateway = await startTestGateway({ memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk });
  mcp = await connect(gateway.url, tenantA.apiKey, ERAS[1]);
});

afterAll(async () => {
  await mcp?.close();
  await gateway?.close();
  await core?.close();
});

describe("who may erase", () => {
  it("a read-write key without memory:erase is refused with 403 naming the scope, and nothing changes", async () => {
    const id = await remember(tenantA.apiKey, "Refused erasure keeps this text.");
    for (const key of [tenantA.apiKey, readOnlyA]) {
      const one = await post(`/memories/${id}/erase`, key, { reason: "secret" });
      expect(one.status).toBe(403);
      expect(one.headers.get("www-authenticate")).toBe('Bearer realm="3ngram", error="insufficient_scope", scope="memory:erase"');
      expect(await one.json()).toMatchObject({ error: "insufficient_scope" });
      const bulk = await post("/erasures", key, { ids: [id], reason: "secret" });
      expect(bulk.status).toBe(403);
    }
    expect(await contentOf(id)).toBe("Refused erasure keeps this text.");
  });

  it("another tenant's id answers exactly like an unknown id (404), and the memory is untouched", async () => {
    const id = await remember(tenantA.apiKey, "Tenant A keeps this one.");
    const foreign = await post(`/memories/${id}/erase`, eraseKeyB, { reason: "mistake" });
    const unknown = await post(`/memories/${crypto.randomUUID()}/erase`, eraseKeyB, { reason: "mistake" });
    const malformed = await post("/memories/not-an-id/erase", eraseKeyB, { reason: "mistake" });
    expect([foreign.status, unknown.status, malformed.status]).toEqual([404, 404, 404]);
    const strip = (body: Record<string, unknown>) => ({ ...body, request_id: undefined });
    const foreignBody = strip((await foreign.json()) as Record<string, unknown>);
    expect(foreignBody).toEqual(strip((await unknown.json()) as Record<string, unknown>));
    expect(foreignBody).toEqual(strip((await malformed.json()) as Record<string, unknown>));
    const bulk = eraseOutputSchema.parse(await (await post("/erasures", eraseKeyB, { ids: [id], reason: "mistake" })).json());
    expect(bulk).toMatchObject({ erased: [], notFound: [id], erasureId: null });
    expect(await contentOf(id)).toBe("Tenant A keeps this one.");
  });

  it("OAuth grants memory:erase only when the client names it", async () => {
    const metadata = (await (await fetch(`${gateway.url}/.well-known/oauth-authorization-server`)).json()) as { scopes_supported: string[] };
    expect(metadata.scopes_supported).toEqual(["memory:read", "memory:write", "memory:erase"]);
    const id = await remember(tenantA.apiKey, "Erased with an OAuth token that asked for it.");

    const unnamed = await obtainTokens(gateway.url, eraseKeyA);
    expect(unnamed.scope).toBe("memory:read memory:write");
    expect((await post(`/memories/${id}/erase`, unnamed.accessToken, { reason: "secret" })).status).toBe(403);
    // Asking for it with a key that does not hold it grants only what the key holds.
    expect((await obtainTokens(gateway.url, tenantA.apiKey, { scope: "memory:read memory:erase" })).scope).toBe("memory:read");

    const named = await obtainTokens(gateway.url, eraseKeyA, { scope: "memory:read memory:erase" });
    expect(named.scope).toBe("memory:read memory:erase");
    const erased = await post(`/memories/${id}/erase`, named.accessToken, { reason: "secret" });
    expect(erased.status).toBe(200);
    expect(eraseOutputSchema.parse(await erased.json()).erased).toEqual([id]);
  });
});

describe("erasing over REST", () => {
  it("erases one memory; REST, get_memories and history show it as erased; a repeat is a no-op", async () => {
    const id = await remember(tenantA.apiKey, "The door code is 4417.", { tags: ["door"] });
    const res = await post(`/memories/${id}/erase`, eraseKeyA, { reason: "secret", reference: "SEC-12" });
    expect(res.status).toBe(200);
    const out = eraseOutputSchema.parse(await res.json());
    expect(out).toMatchObject({ dryRun: false, erased: [id], alreadyErased: [], notFound: [], remaining: 0 });
    expect(out.erasureId).not.toBeNull();

    const record = memoryRecordSchema.parse(await (await get(`/memories/${id}`, tenantA.apiKey)).json());
    expect(record).toMatchObject({ id, topic: ERASED_MARKER, content: ERASED_MARKER, tags: [], status: "archived", embedded: "pending" });
    expect(record.erasedAt).toBeDefined();
    const viaMcp = getMemoriesOutputSchema.parse(structured(await callTool(mcp, "get_memories", { ids: [id] })));
    expect(viaMcp.memories[0]).toMatchObject({ content: ERASED_MARKER, erasedAt: record.erasedAt });
    const history = historyOutputSchema.parse(await (await get(`/memories/${id}/history`, tenantA.apiKey)).json());
    expect(history.events.at(-1)).toMatchObject({
      kind: "erase",
      actor: "user_api",
      payload: { reason: "secret", reference: "SEC-12", erasureId: out.erasureId, by: tenantA.userId },
    });

    const again = eraseOutputSchema.parse(await (await post(`/memories/${id}/erase`, eraseKeyA, { reason: "secret" })).json());
    expect(again).toMatchObject({ erased: [], alreadyErased: [id], erasureId: null });
  });

  it("erases by selector, with a dry run first", async () => {
    const ids = [await remember(tenantA.apiKey, "Selector one.", { project: "leaky" }), await remember(tenantA.apiKey, "Selector two.", { project: "leaky" })];
    const kept = await remember(tenantA.apiKey, "Another project.", { project: "tidy" });
    const dry = eraseOutputSchema.parse(await (await post("/erasures", eraseKeyA, { selector: { project: "leaky" }, reason: "mistake", dryRun: true })).json());
    expect(dry).toMatchObject({ dryRun: true, erasureId: null, remaining: 0 });
    expect(dry.erased.sort()).toEqual([...ids].sort());
    expect(await contentOf(ids[0]!)).toBe("Selector one.");
    const real = eraseOutputSchema.parse(await (await post("/erasures", eraseKeyA, { selector: { project: "leaky" }, reason: "mistake" })).json());
    expect(real.erased.sort()).toEqual([...ids].sort());
    expect(await contentOf(ids[1]!)).toBe(ERASED_MARKER);
    expect(await contentOf(kept)).toBe("Another project.");
  });

  it("answers bad input with 400 naming the field", async () => {
    const id = await remember(tenantA.apiKey, "Bad requests erase nothing.");
    const cases: Array<[string, unknown, string]> = [
      [`/memories/${id}/erase`, {}, "reason"],
      [`/memories/${id}/erase`, { reason: "secret", ids: [id] }, "ids"],
      ["/erasures", { reason: "secret" }, "selector"],
      ["/erasures", { selector: { colour: "red" }, reason: "secret" }, "selector.colour"],
      ["/erasures", { ids: ["nope"], reason: "secret" }, "ids.0"],
      ["/erasures", { ids: [id], reason: "secret", reference: "two words" }, "reference"],
    ];
    for (const [path, body, field] of cases) {
      const res = await post(path, eraseKeyA, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { field?: string }).field, JSON.stringify(body)).toBe(field);
    }
    expect(await contentOf(id)).toBe("Bad requests erase nothing.");
  });
});

describe("the MCP surface", () => {
  it("stays at 11 tools, none of them erases", async () => {
    const { tools } = await mcp.listTools();
    expect(tools).toHaveLength(11);
    for (const tool of tools) expect(`${tool.name} ${tool.description}`).not.toMatch(/\berase/i);
  });
});
