/**
 * What an access token's signature cannot vouch for, against the real gateway, memory (over gRPC)
 * and PostgreSQL: a token signed with the server's own key is still refused when it claims to be
 * issued in the future, or names a user of another tenant than its `tid`. The membership answers
 * are cached: repeat checks cost no memory call, counted on memory's own RPC metrics. A memory
 * service that cannot answer gives a 503, never a pass.
 */
import { loadMemoryConfig, startMemoryService, type RunningMemoryService } from "@3ngram/memory";
import { createLogger } from "@3ngram/runtime";
import { SignJWT, importJWK, type JWK } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { TEST_REDIS_URL } from "../../../../test/support/database.js";
import { eventually, freePort } from "../../../../test/support/processes.js";
import { createMembershipCheck } from "../../src/auth/membership.js";
import { connectMemory, type MemoryPeer } from "../../src/clients/memory.js";
import { startGateway, type RunningGateway } from "../../src/gateway.js";
import { testConfig } from "../support/gateway.js";
import { capturedLog } from "../support/captured-log.js";
import { ERAS, callTool, connect } from "../support/mcp-client.js";

type Tenant = { tenantId: string; userId: string; apiKey: string };

const CHECK_RPC = 'rpc="memory.v1.ApiKeysService/CheckTenantMembership"';
const { log: gatewayLog, lines: logLines } = capturedLog();

let core: CoreServices;
/** The memory service the gateway talks to: on ports of its own, so it can be stopped and its metrics read. */
let memory: RunningMemoryService | undefined;
let memoryEnv: Record<string, string>;
let metricsPort: number;
let gateway: RunningGateway;
let base: string;
let tenantA: Tenant;
let tenantB: Tenant;
let memoryOfB: string;

async function startOwnMemory(): Promise<RunningMemoryService> {
  return startMemoryService(loadMemoryConfig(memoryEnv), { embedder: null, log: createLogger({ service: "memory", level: "silent" }) });
}

beforeAll(async () => {
  core = await startCoreServices({ label: "token-claims" });
  tenantA = await core.createTenant("claims tenant a");
  tenantB = await core.createTenant("claims tenant b");
  // Ports from freePort() can be taken before the service binds them; a lost race picks others.
  for (let attempt = 1; memory === undefined; attempt++) {
    metricsPort = await freePort();
    memoryEnv = {
      DATABASE_URL: core.db.url,
      SERVICE_TRUSTED_JWKS: core.keys.trustedJwks,
      GRPC_HOST: "127.0.0.1",
      GRPC_PORT: String(await freePort()),
      METRICS_PORT: String(metricsPort),
      MIGRATE_ON_START: "false",
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: core.redisPrefix,
      EMBEDDINGS_PROVIDER: "hashing",
    };
    try {
      memory = await startOwnMemory();
    } catch (err) {
      if (attempt >= 5 || (err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
    }
  }
  gateway = await startGateway(testConfig({ memoryAddr: memory.address, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk }), {
    log: gatewayLog,
  });
  base = gateway.url;
  const clientB = await connect(base, tenantB.apiKey, ERAS[0]);
  const stored = await callTool(clientB, "remember", { memoryType: "note", topic: "b only", content: `tenant b's secret ${crypto.randomUUID()}` });
  memoryOfB = (stored.structuredContent as { memory: { id: string } }).memory.id;
  await clientB.close();
});

afterAll(async () => {
  await gateway?.close();
  await memory?.close();
  await core?.close();
});

/** How many CheckTenantMembership calls the memory service has served, by its own metrics. */
async function membershipCalls(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  let calls = 0;
  for (const line of text.split("\n")) {
    const count = /^threengram_rpc_server_seconds_count\{(.*)\} (\d+)$/.exec(line);
    if (count !== null && count[1]!.includes(CHECK_RPC)) calls += Number(count[2]);
  }
  return calls;
}

/** Signs claims with the server's own active key, read from the database (what an attacker must not have). */
async function signWithServerKey(claims: Record<string, unknown>): Promise<string> {
  await fetch(`${base}/.well-known/jwks.json`);
  const { rows } = await core.ownerPool.query<{ kid: string; private_jwk: JWK }>("SELECT kid, private_jwk FROM oauth_signing_keys WHERE retired_at IS NULL");
  const key = await importJWK(rows[0]!.private_jwk, "EdDSA");
  return new SignJWT(claims).setProtectedHeader({ alg: "EdDSA", typ: "at+jwt", kid: rows[0]!.kid }).sign(key);
}

/** Everything a token of ours carries, for tenant A's user unless overridden; undefined drops a claim. */
function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  const all: Record<string, unknown> = {
    iss: base,
    aud: `${base}/mcp`,
    sub: tenantA.userId,
    tid: tenantA.tenantId,
    scope: "memory:read memory:write",
    client_id: "claims-test",
    jti: crypto.randomUUID(),
    iat: now,
    nbf: now,
    exp: now + 600,
    ...overrides,
  };
  return Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined));
}

function mcpPost(token: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${base}/mcp`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...body }),
  });
}

const listTools = (token: string) => mcpPost(token, { method: "tools/list", params: {} });
const getMemory = (token: string, id: string) => mcpPost(token, { method: "tools/call", params: { name: "get_memories", arguments: { ids: [id] } } });
const restGet = (token: string, path: string) => fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${token}` } });

async function expectRefused(token: string): Promise<void> {
  const mcp = await listTools(token);
  expect(mcp.status).toBe(401);
  expect(mcp.headers.get("www-authenticate")).toContain('error="invalid_token"');
  expect((await restGet(token, "/api/v1/memories/facets")).status).toBe(401);
}

describe("access token claims beyond the signature", () => {
  it("accepts a current token for a user of its tenant on /mcp and /api/v1 (control)", async () => {
    const token = await signWithServerKey(claims());
    expect((await listTools(token)).status).toBe(200);
    expect((await restGet(token, "/api/v1/memories/facets")).status).toBe(200);
    const client = await connect(base, token, ERAS[0]);
    const stored = await callTool(client, "remember", { memoryType: "note", topic: "a", content: `tenant a's note ${crypto.randomUUID()}` });
    const id = (stored.structuredContent as { memory: { id: string } }).memory.id;
    expect((await callTool(client, "get_memories", { ids: [id] })).structuredContent).toMatchObject({ memories: [{ id }] });
    await client.close();
  });

  it("accepts iat and nbf a few seconds ahead (another replica's clock), refuses them a day ahead, and refuses a token without iat", async () => {
    const now = Math.floor(Date.now() / 1000);
    expect((await listTools(await signWithServerKey(claims({ iat: now + 2, nbf: now + 2 })))).status).toBe(200);
    await expectRefused(await signWithServerKey(claims({ iat: now + 86_400 })));
    await expectRefused(await signWithServerKey(claims({ iat: now + 86_400, nbf: undefined })));
    await expectRefused(await signWithServerKey(claims({ nbf: now + 86_400 })));
    await expectRefused(await signWithServerKey(claims({ iat: undefined })));
  });

  it("refuses a token whose tid names tenant B and sub a user of tenant A, which reads nothing of B", async () => {
    const crossed = await signWithServerKey(claims({ tid: tenantB.tenantId, sub: tenantA.userId }));
    await expectRefused(crossed);
    expect((await getMemory(crossed, memoryOfB)).status).toBe(401);
    expect((await restGet(crossed, `/api/v1/memories/${memoryOfB}`)).status).toBe(401);
    expect((await restGet(crossed, "/api/v1/memories?limit=50")).status).toBe(401);
    // Nor does a user id that is no user, or no id at all.
    await expectRefused(await signWithServerKey(claims({ sub: crypto.randomUUID() })));
    await expectRefused(await signWithServerKey(claims({ sub: "admin" })));
    // The control: B's own user reads it.
    const own = await signWithServerKey(claims({ tid: tenantB.tenantId, sub: tenantB.userId }));
    const answer = await getMemory(own, memoryOfB);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain(memoryOfB);
  });

  it("answers repeat checks of a pair from the cache, yes and no alike: one memory call each", async () => {
    const tenant = await core.createTenant("claims cached");
    const good = await signWithServerKey(claims({ tid: tenant.tenantId, sub: tenant.userId }));
    const crossed = await signWithServerKey(claims({ tid: tenant.tenantId, sub: tenantB.userId }));
    const before = await membershipCalls();
    for (let i = 0; i < 5; i++) {
      expect((await listTools(good)).status).toBe(200);
      expect((await listTools(crossed)).status).toBe(401);
    }
    // Another token for the same user and tenant is the same question.
    expect((await restGet(await signWithServerKey(claims({ tid: tenant.tenantId, sub: tenant.userId })), "/api/v1/memories/facets")).status).toBe(200);
    expect((await membershipCalls()) - before).toBe(2);
  });

  it("answers 503, never a pass, when memory cannot say whether the user is in the tenant", async () => {
    const tenant = await core.createTenant("claims outage");
    const token = await signWithServerKey(claims({ tid: tenant.tenantId, sub: tenant.userId }));
    await memory!.close();
    memory = undefined;
    try {
      const mcp = await listTools(token);
      expect(mcp.status).toBe(503);
      expect(mcp.headers.get("retry-after")).toBe("1");
      expect((await restGet(token, "/api/v1/memories/facets")).status).toBe(503);
      expect(logLines.join("\n")).toContain("token membership not checked");
    } finally {
      memory = await startOwnMemory();
    }
    await eventually(async () => expect((await listTools(token)).status).toBe(200), 15_000, 100);
  });
});

describe("the membership cache against the real memory service", () => {
  let peer: MemoryPeer;
  beforeAll(async () => {
    peer = connectMemory(memory!.address, await core.keys.signer("gateway"));
  });
  afterAll(() => peer?.close());

  async function addUser(tenantId: string): Promise<string> {
    const userId = crypto.randomUUID();
    await core.ownerPool.query("INSERT INTO users (id, tenant_id, display_name) VALUES ($1, $2, 'claims user')", [userId, tenantId]);
    return userId;
  }

  it("lets a user removed from a tenant in until the TTL runs out, and no longer", async () => {
    const userId = await addUser(tenantA.tenantId);
    let now = Date.now();
    const isMember = createMembershipCheck(peer, { ttlMs: 60_000, now: () => now });
    expect(await isMember(tenantA.tenantId, userId)).toBe(true);
    await core.ownerPool.query("DELETE FROM users WHERE id = $1", [userId]);
    now += 59_000;
    expect(await isMember(tenantA.tenantId, userId)).toBe(true);
    now += 2_000;
    expect(await isMember(tenantA.tenantId, userId)).toBe(false);
  });

  it("asks once for concurrent checks of one pair, and never for ids that are not ids", async () => {
    const userId = await addUser(tenantA.tenantId);
    const isMember = createMembershipCheck(peer);
    const before = await membershipCalls();
    expect(await Promise.all(Array.from({ length: 10 }, () => isMember(tenantA.tenantId, userId)))).toEqual(Array(10).fill(true));
    expect(await isMember("not-a-tenant", userId)).toBe(false);
    expect(await isMember(tenantA.tenantId, "not-a-user")).toBe(false);
    expect((await membershipCalls()) - before).toBe(1);
  });

  it("bounds the cache, forgetting the least recently used pair", async () => {
    const [u1, u2, u3] = [await addUser(tenantA.tenantId), await addUser(tenantA.tenantId), await addUser(tenantA.tenantId)];
    const isMember = createMembershipCheck(peer, { maxEntries: 2 });
    for (const u of [u1, u2, u3]) await isMember(tenantA.tenantId, u); // u3 evicts u1
    const before = await membershipCalls();
    await isMember(tenantA.tenantId, u3);
    await isMember(tenantA.tenantId, u2);
    expect((await membershipCalls()) - before).toBe(0);
    await isMember(tenantA.tenantId, u1);
    expect((await membershipCalls()) - before).toBe(1);
  });
});
