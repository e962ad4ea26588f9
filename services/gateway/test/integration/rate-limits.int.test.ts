/**
 * Rate limits end to end: real gateways over real gRPC memory and search, counting in the real
 * Redis (under this file's own key prefix) or in process, reached with fetch and the official MCP
 * client. Every gateway gets its own sub-prefix, so each test starts with full budgets; the budgets
 * are tiny and the window is a minute, so nothing here waits on a clock.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { createServer, connect as connectTcp, type Server, type Socket } from "node:net";
import { createTenantWithKey, type CreatedTenant } from "@3ngram/memory";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { TEST_REDIS_URL } from "../../../../test/support/database.js";
import { connectMcp } from "../../../../test/support/mcp.js";
import { freePort } from "../../../../test/support/processes.js";
import { startGateway, type RunningGateway } from "../../src/gateway.js";
import { testConfig } from "../support/gateway.js";
import { capturedLog } from "../support/captured-log.js";

let core: CoreServices;
let tenantA: CreatedTenant;
let tenantB: CreatedTenant;
/** A second key for tenant A's user. */
let secondKeyA: string;
const { log: gatewayLog, lines: logLines } = capturedLog();
const log = gatewayLog;
const started: RunningGateway[] = [];
let gatewayCount = 0;

/** Well-formed but never issued: resolving it would answer 401. */
const unknownKey = `3ng_${randomBytes(6).toString("base64url")}_${randomBytes(32).toString("base64url")}`;

beforeAll(async () => {
  core = await startCoreServices({ label: "rate-limits" });
  tenantA = await createTenantWithKey(core.ownerPool, { tenantName: "limits a" });
  tenantB = await createTenantWithKey(core.ownerPool, { tenantName: "limits b" });
  secondKeyA = await addKey(tenantA);
});
afterAll(async () => {
  await Promise.all(started.map((g) => g.close()));
  // Also removes every rate-limit key: they all live under core.redisPrefix.
  await core?.close();
});

/** Issues another API key for the same user (the operator path only issues a tenant's first key). */
async function addKey(owner: CreatedTenant): Promise<string> {
  const prefix = randomBytes(6).toString("base64url");
  const key = `3ng_${prefix}_${randomBytes(32).toString("base64url")}`;
  await core.ownerPool.query("INSERT INTO api_keys (id, tenant_id, user_id, name, prefix, key_hash, scopes) VALUES ($1, $2, $3, 'second', $4, $5, $6)", [
    randomUUID(),
    owner.tenantId,
    owner.userId,
    prefix,
    createHash("sha256").update(key).digest("hex"),
    ["memory:read", "memory:write"],
  ]);
  return key;
}

type Backend = "redis" | "memory";

/** Budgets are generous unless a test narrows them; `prefix` lets two gateways share one Redis budget. */
async function start(backend: Backend, env: Record<string, string> = {}, prefix = `${core.redisPrefix}:rl${++gatewayCount}`): Promise<RunningGateway> {
  const gateway = await startGateway(
    testConfig(
      { memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk },
      {
        ...(backend === "redis" ? { REDIS_URL: TEST_REDIS_URL } : {}),
        RATE_LIMIT_KEY_PREFIX: prefix,
        RATE_LIMIT_IP_PER_MINUTE: "1000",
        RATE_LIMIT_USER_PER_MINUTE: "1000",
        RATE_LIMIT_KEY_PER_MINUTE: "1000",
        ...env,
      },
    ),
    { log },
  );
  started.push(gateway);
  return gateway;
}

const getScopes = (gateway: RunningGateway, key: string, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}/api/v1/scopes`, { headers: { Authorization: `Bearer ${key}`, ...headers } });

const pingMcp = (gateway: RunningGateway, key: string, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}/mcp`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${key}`,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });

/** A JSON-RPC batch, as a 2025-03-26 client sends it (that revision needs no version header). */
const postBatch = (gateway: RunningGateway, key: string, batch: unknown[], headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}/mcp`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(batch),
  });

const rememberCall = (id: number, content: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "remember", arguments: { memoryType: "note", topic: "batch", content } },
});

interface RpcAnswer {
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: { reason?: string } };
}

/** The answers in an SSE (or plain JSON) response to a batch. */
async function rpcAnswers(res: Response): Promise<RpcAnswer[]> {
  const text = await res.text();
  if (!(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) return [JSON.parse(text) as RpcAnswer].flat();
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice("data: ".length)) as RpcAnswer);
}

async function storedWith(marker: string): Promise<number> {
  const { rows } = await core.ownerPool.query<{ n: number }>("SELECT count(*)::int AS n FROM memories WHERE content LIKE $1", [`${marker}%`]);
  return rows[0]!.n;
}

async function statuses(count: number, send: () => Promise<Response>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const res = await send();
    await res.arrayBuffer();
    out.push(res.status);
  }
  return out;
}

async function metric(gateway: RunningGateway, pattern: RegExp): Promise<number | undefined> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const match = new RegExp(`${pattern.source} (\\d+)`).exec(text);
  return match ? Number(match[1]) : undefined;
}

function expectRetryAfter(res: Response): number {
  const value = res.headers.get("retry-after");
  expect(value).toMatch(/^\d+$/);
  const seconds = Number(value);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(60);
  return seconds;
}

describe.each<Backend>(["redis", "memory"])("rate limits (%s backend)", (backend) => {
  it("answers REST 429 with Retry-After, the rate_limited body and RateLimit headers once a user's budget is spent", async () => {
    const gateway = await start(backend, { RATE_LIMIT_USER_PER_MINUTE: "2" });
    const first = await getScopes(gateway, tenantA.apiKey);
    expect(first.status).toBe(200);
    expect(first.headers.get("ratelimit-limit")).toBe("2");
    expect(first.headers.get("ratelimit-remaining")).toBe("1");
    expect(first.headers.get("ratelimit-policy")).toBe("2;w=60");
    expect((await getScopes(gateway, tenantA.apiKey)).status).toBe(200);

    const refused = await getScopes(gateway, tenantA.apiKey);
    expect(refused.status).toBe(429);
    const retryAfter = expectRetryAfter(refused);
    expect(refused.headers.get("ratelimit-remaining")).toBe("0");
    expect(refused.headers.get("ratelimit-reset")).toBe(String(retryAfter));
    const body = (await refused.json()) as { error: string; detail: string; request_id: string };
    expect(body.error).toBe("rate_limited");
    expect(body.detail).toContain("per user");
    expect(body.request_id).toBe(refused.headers.get("x-request-id"));
    expect(await metric(gateway, /threengram_gateway_rate_limited_total\{layer="user"[^}]*\}/)).toBe(1);
  });

  it("answers /mcp 429 with a JSON-RPC error, and the official MCP client sees the refusal", async () => {
    const gateway = await start(backend, { RATE_LIMIT_USER_PER_MINUTE: "6" });
    const connection = await connectMcp(`${gateway.url}/mcp`, tenantA.apiKey);
    try {
      let refusal: unknown;
      let served = 0;
      // Connecting spent part of the budget (how much depends on the client's handshake), so ping until refused.
      for (let i = 0; i < 10 && refusal === undefined; i++) {
        try {
          await connection.client.ping();
          served++;
        } catch (err) {
          refusal = err;
        }
      }
      expect(served).toBeGreaterThan(0);
      expect(served).toBeLessThan(6);
      expect(refusal).toMatchObject({ data: { status: 429 } });
      expect(String((refusal as Error).message)).toContain("rate limit exceeded");
    } finally {
      await connection.close();
    }
    const raw = await pingMcp(gateway, tenantA.apiKey);
    expect(raw.status).toBe(429);
    expectRetryAfter(raw);
    expect(await raw.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32000, data: { reason: "rate_limited" } } });
  });

  it("counts a JSON-RPC batch as its calls: a batch of 50 on a budget of 20 runs 20 and refuses 30 with the rate-limit error", async () => {
    const gateway = await start(backend, { RATE_LIMIT_KEY_PER_MINUTE: "20" });
    const marker = randomUUID();
    const batch = Array.from({ length: 50 }, (_, i) => rememberCall(i + 1, `${marker} ${i}`));
    const res = await postBatch(gateway, tenantA.apiKey, batch);
    expect(res.status).toBe(200);
    expect(res.headers.get("ratelimit-limit")).toBe("20");
    expect(res.headers.get("ratelimit-remaining")).toBe("0");
    expectRetryAfter(res);
    const answers = await rpcAnswers(res);
    expect(answers).toHaveLength(50);
    const refused = answers.filter((a) => a.error !== undefined);
    expect(refused).toHaveLength(30);
    for (const answer of refused) {
      expect(answer.error).toMatchObject({ code: -32000, data: { reason: "rate_limited", retryAfterSeconds: expect.any(Number) } });
      expect(answer.error!.message).toContain("per credential");
    }
    expect(answers.filter((a) => a.result !== undefined)).toHaveLength(20);
    expect(new Set(answers.map((a) => a.id))).toEqual(new Set(batch.map((c) => c.id)));
    expect(await storedWith(marker)).toBe(20);
    expect(await metric(gateway, /threengram_gateway_rate_limited_total\{layer="key"[^}]*\}/)).toBe(30);
    // The budget is spent: the next single call is refused at the door.
    expect((await pingMcp(gateway, tenantA.apiKey)).status).toBe(429);
  });

  it("counts a batch on the per-address and per-user budgets too, each layer only for what the one before let through", async () => {
    const gateway = await start(backend, { RATE_LIMIT_IP_PER_MINUTE: "12", RATE_LIMIT_USER_PER_MINUTE: "8" });
    const res = await postBatch(
      gateway,
      tenantA.apiKey,
      Array.from({ length: 10 }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "ping" })),
    );
    expect(res.status).toBe(200);
    const answers = await rpcAnswers(res);
    expect(answers.filter((a) => a.result !== undefined)).toHaveLength(8);
    expect(answers.filter((a) => a.error !== undefined).every((a) => a.error!.message.includes("per user"))).toBe(true);
    // The address spent 10 of its 12: another user's batch of 5 from it gets 2 calls through.
    const second = await rpcAnswers(
      await postBatch(
        gateway,
        tenantB.apiKey,
        Array.from({ length: 5 }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "ping" })),
      ),
    );
    expect(second).toHaveLength(5);
    expect(second.filter((a) => a.result !== undefined)).toHaveLength(2);
    expect(second.filter((a) => a.error?.data?.reason === "rate_limited" && a.error.message.includes("per client address"))).toHaveLength(3);
  });

  it("refuses a batch whole, before any call runs, on a protocol version without batching", async () => {
    const gateway = await start(backend);
    const marker = randomUUID();
    for (const version of ["2025-06-18", "2025-11-25", "2024-11-05"]) {
      const res = await postBatch(gateway, tenantA.apiKey, [rememberCall(1, `${marker} a`), rememberCall(2, `${marker} b`)], {
        "mcp-protocol-version": version,
      });
      expect(res.status, version).toBe(400);
      expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringContaining(version) } });
    }
    expect(await storedWith(marker)).toBe(0);
  });

  it("keeps one tenant's exhausted budget from touching another tenant", async () => {
    const gateway = await start(backend, { RATE_LIMIT_USER_PER_MINUTE: "2" });
    expect(await statuses(3, () => getScopes(gateway, tenantA.apiKey))).toEqual([200, 200, 429]);
    expect(await statuses(2, () => getScopes(gateway, tenantB.apiKey))).toEqual([200, 200]);
    // One budget per user across REST and MCP: tenant B has now spent its own.
    expect(await statuses(1, () => pingMcp(gateway, tenantB.apiKey))).toEqual([429]);
  });

  it("counts each key on its own budget and the user's keys together on the user's", async () => {
    const gateway = await start(backend, { RATE_LIMIT_KEY_PER_MINUTE: "2", RATE_LIMIT_USER_PER_MINUTE: "3" });
    expect(await statuses(3, () => getScopes(gateway, tenantA.apiKey))).toEqual([200, 200, 429]);
    const perKey = await getScopes(gateway, tenantA.apiKey);
    expect(((await perKey.json()) as { detail: string }).detail).toContain("per credential");
    // The second key has a fresh key budget but shares the user's, of which the first key spent 2 of 3.
    expect(await statuses(1, () => getScopes(gateway, secondKeyA))).toEqual([200]);
    const perUser = await getScopes(gateway, secondKeyA);
    expect(perUser.status).toBe(429);
    expect(((await perUser.json()) as { detail: string }).detail).toContain("per user");
    expect(await metric(gateway, /threengram_gateway_rate_limited_total\{layer="key"[^}]*\}/)).toBe(2);
    expect(await metric(gateway, /threengram_gateway_rate_limited_total\{layer="user"[^}]*\}/)).toBe(1);
  });

  it("cuts an unauthenticated flood at the per-IP edge, before any key is resolved", async () => {
    const gateway = await start(backend, { RATE_LIMIT_IP_PER_MINUTE: "3" });
    // Unknown keys are refused by authentication while the edge budget lasts; after that the edge
    // answers 429 and authentication (a call to the memory service) is never reached.
    expect(await statuses(2, () => getScopes(gateway, unknownKey))).toEqual([401, 401]);
    expect(await statuses(1, () => pingMcp(gateway, unknownKey))).toEqual([401]);
    const rest = await getScopes(gateway, unknownKey);
    expect(rest.status).toBe(429);
    expect(rest.headers.get("www-authenticate")).toBeNull();
    expect(((await rest.json()) as { detail: string }).detail).toContain("per client address");
    const mcp = await pingMcp(gateway, unknownKey);
    expect(mcp.status).toBe(429);
    expectRetryAfter(mcp);
    // The budget is the address's, whatever the key: a valid key from the same address waits too.
    expect((await getScopes(gateway, tenantA.apiKey)).status).toBe(429);
    expect(await metric(gateway, /threengram_gateway_rate_limited_total\{layer="ip"[^}]*\}/)).toBe(3);
  });

  it("puts the OAuth endpoints behind the same per-IP edge (registration is unauthenticated by nature)", async () => {
    const gateway = await start(backend, { RATE_LIMIT_IP_PER_MINUTE: "2" });
    const register = () =>
      fetch(`${gateway.url}/oauth/register`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ client_name: "flood", redirect_uris: ["http://127.0.0.1:9/cb"] }),
      });
    expect(await statuses(2, register)).toEqual([201, 201]);
    const refused = await register();
    expect(refused.status).toBe(429);
    expectRetryAfter(refused);
    // The discovery documents stay reachable: clients read them before anything else.
    expect((await fetch(`${gateway.url}/.well-known/oauth-authorization-server`)).status).toBe(200);
  });

  it("refuses a bad Origin with 403 before counting it, and never limits /health, /ready or /metrics", async () => {
    const gateway = await start(backend, { RATE_LIMIT_IP_PER_MINUTE: "1" });
    expect(await statuses(3, () => pingMcp(gateway, unknownKey, { Origin: "https://evil.example" }))).toEqual([403, 403, 403]);
    // The refused Origins spent nothing: the one request the address may make still reaches authentication.
    expect(await statuses(2, () => pingMcp(gateway, unknownKey))).toEqual([401, 429]);
    expect(await statuses(1, () => pingMcp(gateway, unknownKey, { Origin: "https://evil.example" }))).toEqual([403]);
    for (const path of ["/health", "/ready", "/metrics"]) {
      expect(await statuses(3, () => fetch(`${gateway.url}${path}`))).toEqual([200, 200, 200]);
    }
  });

  it("limits completion/complete per user on the same mechanism", async () => {
    const gateway = await start(backend, { MCP_COMPLETIONS_PER_MINUTE: "1" });
    const connection = await connectMcp(`${gateway.url}/mcp`, tenantA.apiKey);
    try {
      await connection.call("remember", { memoryType: "note", topic: "limits", content: `completion budget ${randomUUID()}`, scope: "rate-limit-scope" });
      const complete = async () =>
        (await connection.client.complete({ ref: { type: "ref/prompt", name: "debrief" }, argument: { name: "scope", value: "rate-limit" } })).completion
          .values;
      expect(await complete()).toEqual(["rate-limit-scope"]);
      expect(await complete()).toEqual([]);
    } finally {
      await connection.close();
    }
    expect(await metric(gateway, /threengram_gateway_rate_limited_total\{layer="completion"[^}]*\}/)).toBe(1);
  });
});

describe("rate limits shared through Redis", () => {
  it("gives two gateway instances on one Redis one budget, where in-process instances each count their own", async () => {
    const prefix = `${core.redisPrefix}:shared`;
    const [one, two] = [await start("redis", { RATE_LIMIT_USER_PER_MINUTE: "3" }, prefix), await start("redis", { RATE_LIMIT_USER_PER_MINUTE: "3" }, prefix)];
    const alternating = [one, two, one, two];
    const shared: number[] = [];
    for (const gateway of alternating) shared.push((await getScopes(gateway, tenantA.apiKey)).status);
    expect(shared).toEqual([200, 200, 200, 429]);

    const [three, four] = [await start("memory", { RATE_LIMIT_USER_PER_MINUTE: "3" }), await start("memory", { RATE_LIMIT_USER_PER_MINUTE: "3" })];
    const separate: number[] = [];
    for (const gateway of [three, four, three, four]) separate.push((await getScopes(gateway, tenantA.apiKey)).status);
    expect(separate).toEqual([200, 200, 200, 200]);
  });

  it("stores counters under the configured prefix by key id and digest, never by the raw key", async () => {
    const prefix = `${core.redisPrefix}:keys`;
    const gateway = await start("redis", {}, prefix);
    expect((await getScopes(gateway, tenantA.apiKey)).status).toBe(200);
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const keys = (await redis.keys(`${prefix}:*`)).sort();
      expect(keys).toEqual([`${prefix}:ip:127.0.0.1`, `${prefix}:key:api_key:${tenantA.keyId}`, `${prefix}:user:${tenantA.tenantId}:${tenantA.userId}`].sort());
      for (const key of keys) expect(key).not.toContain(tenantA.apiKey);
    } finally {
      redis.disconnect();
    }
  });

  it("keeps serving with per-instance limits while Redis is unreachable, and logs the outage without the URL", async () => {
    const deadPort = await freePort();
    const gateway = await start("redis", { REDIS_URL: `redis://:hunter2-secret@127.0.0.1:${deadPort}`, RATE_LIMIT_USER_PER_MINUTE: "2" });
    expect(await statuses(3, () => getScopes(gateway, tenantA.apiKey))).toEqual([200, 200, 429]);
    expect(await statuses(1, () => getScopes(gateway, tenantB.apiKey))).toEqual([200]);
    expect(await metric(gateway, /threengram_gateway_rate_limit_store_degraded\{[^}]*\}/)).toBe(1);
    const outage = logLines.filter((line) => line.includes("rate-limit store unreachable"));
    expect(outage.length).toBeGreaterThan(0);
    expect(outage.join("\n")).toContain("ECONNREFUSED");
    expect(logLines.join("\n")).not.toContain("hunter2-secret");
  });
});

/** A TCP relay to the test Redis that can be cut and restored, to stage an outage of a Redis in use. */
async function startRelay(port = 0): Promise<{ port: number; cut(): Promise<void> }> {
  const target = new URL(TEST_REDIS_URL);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connectTcp(Number(target.port || 6379), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => s.destroy());
      s.on("close", () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    cut: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

/** Polls a condition that depends on reconnect backoff; the assertions themselves never depend on time. */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe("a Redis outage while serving", () => {
  it("falls back to the insurance limiter when Redis goes away, and returns to the shared count when it is back", async () => {
    const relay = await startRelay();
    const prefix = `${core.redisPrefix}:outage`;
    const gateway = await start("redis", { REDIS_URL: `redis://127.0.0.1:${relay.port}`, RATE_LIMIT_USER_PER_MINUTE: "3" }, prefix);
    const redis = new Redis(TEST_REDIS_URL);
    const userKey = `${prefix}:user:${tenantA.tenantId}:${tenantA.userId}`;
    try {
      expect(await statuses(1, () => getScopes(gateway, tenantA.apiKey))).toEqual([200]);
      expect(await redis.get(userKey)).toBe("1");

      await relay.cut();
      // Counted in this instance's memory now, with a full budget of its own; Redis never hears of it.
      expect(await statuses(4, () => getScopes(gateway, tenantA.apiKey))).toEqual([200, 200, 200, 429]);
      expect(await redis.get(userKey)).toBe("1");
      expect(await metric(gateway, /threengram_gateway_rate_limit_store_degraded\{[^}]*\}/)).toBe(1);

      const restored = await startRelay(relay.port);
      try {
        await eventually("the limiter to reconnect", async () => (await metric(gateway, /threengram_gateway_rate_limit_store_degraded\{[^}]*\}/)) === 0);
        // Back on the shared count, which still holds the one request Redis saw.
        expect(await statuses(3, () => getScopes(gateway, tenantA.apiKey))).toEqual([200, 200, 429]);
        expect(await redis.get(userKey)).toBe("4");
      } finally {
        await gateway.close();
        await restored.cut();
      }
      expect(logLines.some((line) => line.includes("rate-limit store reachable again"))).toBe(true);
    } finally {
      redis.disconnect();
    }
  });
});

describe("client address behind a proxy", () => {
  it("ignores X-Forwarded-For by default, so a client cannot pick its own budget", async () => {
    const gateway = await start("redis", { RATE_LIMIT_IP_PER_MINUTE: "1" });
    expect((await getScopes(gateway, tenantA.apiKey, { "X-Forwarded-For": "203.0.113.1" })).status).toBe(200);
    expect((await getScopes(gateway, tenantA.apiKey, { "X-Forwarded-For": "203.0.113.2" })).status).toBe(429);
  });

  it("counts each forwarded client on its own when TRUST_PROXY names the hops", async () => {
    const gateway = await start("redis", { RATE_LIMIT_IP_PER_MINUTE: "1", TRUST_PROXY: "1" });
    expect((await getScopes(gateway, tenantA.apiKey, { "X-Forwarded-For": "203.0.113.1" })).status).toBe(200);
    expect((await getScopes(gateway, tenantA.apiKey, { "X-Forwarded-For": "203.0.113.2" })).status).toBe(200);
    expect((await getScopes(gateway, tenantA.apiKey, { "X-Forwarded-For": "203.0.113.1" })).status).toBe(429);
    // One IPv6 host rotating through its /64 is still one client.
    expect((await getScopes(gateway, tenantA.apiKey, { "X-Forwarded-For": "2001:db8:1:2::1" })).status).toBe(200);
    expect((await getScopes(gateway, tenantA.apiKey, { "X-Forwarded-For": "2001:db8:1:2:ffff::9" })).status).toBe(429);
  });
});
