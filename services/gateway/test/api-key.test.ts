import { AppError } from "@3ngram/errors";
import { ResolveApiKeyResponseSchema } from "@3ngram/proto/memory/v1";
import { SCOPES } from "@3ngram/rpc";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { bearerToken, createApiKeyResolver, fromAuthInfo, toAuthInfo } from "../src/auth/api-key.js";
import type { MemoryClient } from "../src/clients/memory.js";

const TENANT = "00000000-0000-4000-8000-00000000000a";

/** A memory client whose ResolveApiKey is scripted; every other method is unused here. */
function fakeMemory(resolve: (apiKey: string) => Promise<{ tenantId: string; userId: string; scopes: string[] }>) {
  const seen: { apiKey: string; scopes: readonly string[]; tenantId?: string }[] = [];
  const client = {
    async resolveApiKey(req: { apiKey?: string }, options: { identity: { scopes: readonly string[]; tenantId?: string } }) {
      const apiKey = req.apiKey ?? "";
      seen.push({ apiKey, scopes: options.identity.scopes, tenantId: options.identity.tenantId });
      return create(ResolveApiKeyResponseSchema, { ...(await resolve(apiKey)), keyId: "k" });
    },
  } as unknown as MemoryClient;
  return { client, seen };
}

const valid = async () => ({ tenantId: TENANT, userId: "u1", scopes: [SCOPES.read, SCOPES.write] });

describe("API key resolution", () => {
  it("asks memory with only the internal:auth scope and no tenant", async () => {
    const { client, seen } = fakeMemory(valid);
    const principal = await createApiKeyResolver(client)("key-1");
    expect(principal).toMatchObject({ tenantId: TENANT, userId: "u1", scopes: [SCOPES.read, SCOPES.write] });
    expect(seen).toEqual([{ apiKey: "key-1", scopes: [SCOPES.internalAuth], tenantId: undefined }]);
  });

  it("caches successful resolutions for the TTL, then asks again", async () => {
    let now = 1_000_000;
    const { client, seen } = fakeMemory(valid);
    const resolve = createApiKeyResolver(client, { ttlMs: 30_000, now: () => now });
    const first = await resolve("key-1");
    await resolve("key-1");
    now += 29_000;
    await resolve("key-1");
    expect(seen).toHaveLength(1);
    expect(first.expiresAt).toBe(Math.floor((1_000_000 + 30_000) / 1000));
    now += 2_000;
    await resolve("key-1");
    expect(seen).toHaveLength(2);
  });

  it("bounds the cache, evicting the oldest entry", async () => {
    const { client, seen } = fakeMemory(valid);
    const resolve = createApiKeyResolver(client, { maxEntries: 2 });
    await resolve("a");
    await resolve("b");
    await resolve("c"); // evicts a
    await resolve("b");
    await resolve("c");
    expect(seen.map((s) => s.apiKey)).toEqual(["a", "b", "c"]);
    await resolve("a");
    expect(seen.map((s) => s.apiKey)).toEqual(["a", "b", "c", "a"]);
  });

  it("never caches failures", async () => {
    let calls = 0;
    const { client } = fakeMemory(async () => {
      calls++;
      throw new AppError("unauthenticated", "unknown api key");
    });
    const resolve = createApiKeyResolver(client);
    await expect(resolve("bad")).rejects.toMatchObject({ reason: "unauthenticated", message: "invalid API key" });
    await expect(resolve("bad")).rejects.toMatchObject({ reason: "unauthenticated" });
    expect(calls).toBe(2);
  });

  it("maps memory's answers: unavailable passes through, caller faults become unauthenticated", async () => {
    const failing = (err: AppError) => createApiKeyResolver(fakeMemory(async () => Promise.reject(err)).client);
    await expect(failing(new AppError("unavailable", "memory service unavailable, retry later"))("k")).rejects.toMatchObject({ reason: "unavailable" });
    await expect(failing(new AppError("not_found", "no such key"))("k")).rejects.toMatchObject({ reason: "unauthenticated" });
    await expect(failing(new AppError("invalid_input", "apiKey: malformed"))("k")).rejects.toMatchObject({ reason: "unauthenticated" });
    await expect(failing(new AppError("internal_error", "internal error"))("k")).rejects.toMatchObject({ reason: "internal_error" });
  });

  it("refuses empty and oversized keys without asking memory", async () => {
    const { client, seen } = fakeMemory(valid);
    const resolve = createApiKeyResolver(client);
    await expect(resolve("")).rejects.toMatchObject({ reason: "unauthenticated" });
    await expect(resolve("k".repeat(513))).rejects.toMatchObject({ reason: "unauthenticated" });
    expect(seen).toHaveLength(0);
  });

  it("refuses a resolution without tenant or user", async () => {
    const { client } = fakeMemory(async () => ({ tenantId: "", userId: "u", scopes: [SCOPES.read] }));
    await expect(createApiKeyResolver(client)("k")).rejects.toMatchObject({ reason: "unauthenticated" });
  });

  it("keeps only the public scopes, so a key can never carry internal ones through the gateway", async () => {
    const { client } = fakeMemory(async () => ({ tenantId: TENANT, userId: "u", scopes: [SCOPES.read, SCOPES.internalAuth, SCOPES.internalEmbed] }));
    expect((await createApiKeyResolver(client)("k")).scopes).toEqual([SCOPES.read]);
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
