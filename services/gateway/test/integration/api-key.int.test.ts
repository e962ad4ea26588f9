import { loadMemoryConfig, startMemoryService } from "@3ngram/memory";
import { SCOPES } from "@3ngram/rpc";
import { createLogger } from "@3ngram/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { TEST_REDIS_URL } from "../../../../test/support/database.js";
import { eventually, freePort } from "../../../../test/support/processes.js";
import { bearerToken, createApiKeyResolver, fromAuthInfo, toAuthInfo } from "../../src/auth/api-key.js";
import { connectMemory, type MemoryPeer } from "../../src/clients/memory.js";

const TENANT = "00000000-0000-4000-8000-00000000000a";

let stack: CoreServices;
let memory: MemoryPeer;

beforeAll(async () => {
  stack = await startCoreServices({ label: "apikey" });
  memory = await stack.publicMemoryClient();
});
afterAll(async () => {
  await stack?.close();
});

async function setRevoked(apiKey: string, revoked: boolean): Promise<void> {
  const prefix = apiKey.slice("3ng_".length, "3ng_".length + 8);
  await stack.ownerPool.query("UPDATE api_keys SET revoked_at = $2 WHERE prefix = $1", [prefix, revoked ? new Date() : null]);
}

describe("API key resolution against the real memory service", () => {
  it("resolves a key to its tenant, user and scopes", async () => {
    const tenant = await stack.createTenant("resolve");
    const principal = await createApiKeyResolver(memory)(tenant.apiKey);
    expect(principal).toMatchObject({ tenantId: tenant.tenantId, userId: tenant.userId, scopes: [SCOPES.read, SCOPES.write] });
  });

  it("caches a resolution for the TTL, then asks again (a revoked key stops working then)", async () => {
    const tenant = await stack.createTenant("ttl");
    let now = Date.now();
    const resolve = createApiKeyResolver(memory, { ttlMs: 30_000, now: () => now });
    const first = await resolve(tenant.apiKey);
    expect(first.expiresAt).toBe(Math.floor((now + 30_000) / 1000));
    await setRevoked(tenant.apiKey, true);
    now += 29_000;
    await expect(resolve(tenant.apiKey)).resolves.toMatchObject({ tenantId: tenant.tenantId });
    now += 2_000;
    await expect(resolve(tenant.apiKey)).rejects.toMatchObject({ reason: "unauthenticated", message: "invalid API key" });
  });

  it("bounds the cache, evicting the oldest entry", async () => {
    const [a, b, c] = [await stack.createTenant("a"), await stack.createTenant("b"), await stack.createTenant("c")];
    const resolve = createApiKeyResolver(memory, { maxEntries: 2 });
    for (const t of [a, b, c]) await resolve(t.apiKey); // c evicts a
    for (const t of [a, b, c]) await setRevoked(t.apiKey, true);
    await expect(resolve(c.apiKey)).resolves.toMatchObject({ tenantId: c.tenantId });
    await expect(resolve(b.apiKey)).resolves.toMatchObject({ tenantId: b.tenantId });
    await expect(resolve(a.apiKey)).rejects.toMatchObject({ reason: "unauthenticated" });
  });

  it("never caches a failure", async () => {
    const tenant = await stack.createTenant("fail");
    const resolve = createApiKeyResolver(memory);
    await setRevoked(tenant.apiKey, true);
    await expect(resolve(tenant.apiKey)).rejects.toMatchObject({ reason: "unauthenticated" });
    await setRevoked(tenant.apiKey, false);
    await expect(resolve(tenant.apiKey)).resolves.toMatchObject({ tenantId: tenant.tenantId });
  });

  it("passes memory being unreachable through as unavailable, not as a bad key", async () => {
    const unreachable = connectMemory(`127.0.0.1:${await freePort()}`, await stack.keys.signer("gateway"));
    await expect(createApiKeyResolver(unreachable)(`3ng_${"a".repeat(8)}_${"b".repeat(43)}`)).rejects.toMatchObject({ reason: "unavailable" });
    unreachable.close();
  });

  it("honours a recent resolution while memory is down, for a bounded time, and revocation applies once memory is back", async () => {
    const tenant = await stack.createTenant("stale");
    const port = await freePort();
    // A memory service of its own on a fixed port, so it can go away and come back at the same address.
    const env = {
      DATABASE_URL: stack.db.url,
      SERVICE_TRUSTED_JWKS: stack.keys.trustedJwks,
      GRPC_HOST: "127.0.0.1",
      GRPC_PORT: String(port),
      METRICS_PORT: "0",
      MIGRATE_ON_START: "false",
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: stack.redisPrefix,
      EMBEDDINGS_PROVIDER: "hashing",
    };
    const start = () => startMemoryService(loadMemoryConfig(env), { embedder: null, log: createLogger({ service: "test", level: "silent" }) });
    let own = await start();
    const client = connectMemory(`127.0.0.1:${port}`, await stack.keys.signer("gateway"));
    try {
      let now = Date.now();
      const resolve = createApiKeyResolver(client, { ttlMs: 30_000, staleWhileUnavailableMs: 300_000, now: () => now });
      await resolve(tenant.apiKey);
      await own.close();

      now += 60_000; // past the TTL: memory is asked, cannot answer, and the recent resolution stands in
      const stale = await resolve(tenant.apiKey);
      expect(stale).toMatchObject({ tenantId: tenant.tenantId, userId: tenant.userId });
      expect(stale.expiresAt * 1000).toBeGreaterThan(now);
      now += 250_000; // 310 s after the resolution: past the bound, the outage shows
      await expect(resolve(tenant.apiKey)).rejects.toMatchObject({ reason: "unavailable" });

      own = await start();
      await setRevoked(tenant.apiKey, true);
      await eventually(() => expect(resolve(tenant.apiKey)).rejects.toMatchObject({ reason: "unauthenticated" }), 15_000, 100);
    } finally {
      client.close();
      await own.close();
    }
  });

  it("refuses empty and oversized keys without asking memory", async () => {
    // Memory is unreachable here: had the resolver asked, the answer would be unavailable.
    const unreachable = connectMemory(`127.0.0.1:${await freePort()}`, await stack.keys.signer("gateway"));
    const resolve = createApiKeyResolver(unreachable);
    await expect(resolve("")).rejects.toMatchObject({ reason: "unauthenticated" });
    await expect(resolve("k".repeat(513))).rejects.toMatchObject({ reason: "unauthenticated" });
    unreachable.close();
  });
});

describe("bearer header parsing", () => {
  it("extracts the token", () => {
    expect(bearerToken("Bearer abc.DEF_123-~")).toBe("abc.DEF_123-~");
    expect(bearerToken("bearer abc")).toBe("abc");
    expect(bearerToken("Bearer   abc  ")).toBe("abc");
  });

  it("rejects other schemes and malformed values", () => {
    for (const header of [undefined, "", "Bearer", "Bearer ", "Basic abc", "Bearer a b", "Bearerabc", "Bearer ab\u00e9"]) {
      expect(bearerToken(header), String(header)).toBeUndefined();
    }
  });
});

describe("AuthInfo round trip", () => {
  it("redacts the token and carries tenant, user and request id", () => {
    const principal = { tenantId: TENANT, userId: "u1", scopes: [SCOPES.read], expiresAt: 1_900_000_000 };
    const info = toAuthInfo(principal, "req-1");
    expect(info).toEqual({
      token: "<redacted>",
      clientId: "u1",
      scopes: [SCOPES.read],
      expiresAt: 1_900_000_000,
      extra: { tenantId: TENANT, userId: "u1", requestId: "req-1" },
    });
    expect(fromAuthInfo(info)).toEqual({ principal, requestId: "req-1" });
    expect(fromAuthInfo(undefined)).toBeUndefined();
    expect(fromAuthInfo({ token: "t", clientId: "c", scopes: [] })).toBeUndefined();
  });
});
