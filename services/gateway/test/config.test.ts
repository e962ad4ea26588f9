import { ConfigError, loadConfig } from "@3ngram/runtime";
import { generateServiceKeyPair } from "@3ngram/rpc";
import { beforeAll, describe, expect, it } from "vitest";
import { gatewayConfigSchema } from "../src/config.js";

let privateJwk: string;
let publicJwk: string;
beforeAll(async () => {
  const pair = await generateServiceKeyPair("k1");
  privateJwk = JSON.stringify(pair.privateJwk);
  publicJwk = JSON.stringify(pair.publicJwk);
});

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(gatewayConfigSchema, env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe("gateway config", () => {
  it("applies the documented defaults", () => {
    const config = loadConfig(gatewayConfigSchema, { SERVICE_SIGNING_JWK: privateJwk });
    expect(config).toMatchObject({
      port: 8080,
      host: "0.0.0.0",
      memoryAddr: "127.0.0.1:50051",
      searchAddr: "127.0.0.1:50052",
      allowedOrigins: [],
      publicUrl: undefined,
      logLevel: "info",
      cimd: { timeoutMs: 5000, maxRedirects: 0, cacheEntries: 512 },
      trustProxy: false,
      uiSessionSecret: undefined,
      rateLimits: {
        redisUrl: undefined,
        keyPrefix: "3ngram:rl",
        ipPerMinute: 600,
        userPerMinute: 300,
        keyPerMinute: 300,
        completionsPerMinute: 120,
      },
    });
    expect(config.serviceSigningJwk.d).toBeTypeOf("string");
  });

  it("refuses a UI session secret shorter than 32 characters", () => {
    expect(problems({ SERVICE_SIGNING_JWK: privateJwk, UI_SESSION_SECRET: "s".repeat(31) })).toEqual([
      expect.stringContaining("UI_SESSION_SECRET must be at least 32 characters"),
    ]);
  });

  it("reads PUBLIC_URL's scheme in any case, as the secure-cookie and issuer checks need it", () => {
    const config = loadConfig(gatewayConfigSchema, { SERVICE_SIGNING_JWK: privateJwk, PUBLIC_URL: "HTTPS://Memory.example.com/base" });
    expect(config.publicUrl).toBe("https://Memory.example.com/base");
  });

  it("reads every variable", () => {
    const config = loadConfig(gatewayConfigSchema, {
      PORT: "0",
      HOST: "127.0.0.1",
      MEMORY_ADDR: "memory:50051",
      SEARCH_ADDR: "dns:///search:50052",
      SERVICE_SIGNING_JWK: privateJwk,
      MCP_ALLOWED_ORIGINS: " https://Claude.ai , http://localhost:3000 ",
      PUBLIC_URL: "https://memory.example.com/",
      LOG_LEVEL: "debug",
      MCP_COMPLETIONS_PER_MINUTE: "7",
      OAUTH_CIMD_TIMEOUT_MS: "2500",
      OAUTH_CIMD_MAX_REDIRECTS: "2",
      OAUTH_CIMD_CACHE_ENTRIES: "64",
      REDIS_URL: "rediss://:secret@redis.internal:6380/2",
      RATE_LIMIT_KEY_PREFIX: "prod:rl",
      RATE_LIMIT_IP_PER_MINUTE: "1000",
      RATE_LIMIT_USER_PER_MINUTE: "200",
      RATE_LIMIT_KEY_PER_MINUTE: "100",
      TRUST_PROXY: "1",
      UI_SESSION_SECRET: "s".repeat(32),
    });
    expect(config.uiSessionSecret).toBe("s".repeat(32));
    expect(config.port).toBe(0);
    expect(config.host).toBe("127.0.0.1");
    expect(config.memoryAddr).toBe("memory:50051");
    expect(config.searchAddr).toBe("dns:///search:50052");
    // Normalised origins, plus the public URL's own origin.
    expect(config.allowedOrigins).toEqual(["https://claude.ai", "http://localhost:3000", "https://memory.example.com"]);
    expect(config.publicUrl).toBe("https://memory.example.com/");
    expect(config.logLevel).toBe("debug");
    expect(config.cimd).toEqual({ timeoutMs: 2500, maxRedirects: 2, cacheEntries: 64 });
    expect(config.rateLimits).toEqual({
      redisUrl: "rediss://:secret@redis.internal:6380/2",
      keyPrefix: "prod:rl",
      ipPerMinute: 1000,
      userPerMinute: 200,
      keyPerMinute: 100,
      completionsPerMinute: 7,
    });
    expect(config.trustProxy).toBe(1);
  });

  it("requires a private signing key and never echoes it", () => {
    expect(problems({})).toEqual([expect.stringMatching(/^SERVICE_SIGNING_JWK:/)]);
    const publicOnly = problems({ SERVICE_SIGNING_JWK: publicJwk });
    expect(publicOnly).toEqual([expect.stringMatching(/^SERVICE_SIGNING_JWK: must be a private Ed25519 JWK/)]);
    const garbage = problems({ SERVICE_SIGNING_JWK: "{not json secret-material" });
    expect(garbage.join("\n")).not.toContain("secret-material");
  });

  it("rejects malformed values with the variable named", () => {
    const found = problems({ SERVICE_SIGNING_JWK: privateJwk, PORT: "http", MCP_ALLOWED_ORIGINS: "ftp://x", PUBLIC_URL: "nope", LOG_LEVEL: "loud" });
    expect(found.map((p) => p.split(":")[0]).sort()).toEqual(["LOG_LEVEL", "MCP_ALLOWED_ORIGINS", "PORT", "PUBLIC_URL"]);
  });

  it("bounds the metadata-document fetch settings", () => {
    const found = problems({ SERVICE_SIGNING_JWK: privateJwk, OAUTH_CIMD_TIMEOUT_MS: "60000", OAUTH_CIMD_MAX_REDIRECTS: "4", OAUTH_CIMD_CACHE_ENTRIES: "0" });
    expect(found.map((p) => p.split(":")[0]).sort()).toEqual(["OAUTH_CIMD_CACHE_ENTRIES", "OAUTH_CIMD_MAX_REDIRECTS", "OAUTH_CIMD_TIMEOUT_MS"]);
  });

  it("refuses rate-limit settings that would weaken or break the limits", () => {
    const found = problems({
      SERVICE_SIGNING_JWK: privateJwk,
      REDIS_URL: "http://redis:6379",
      RATE_LIMIT_IP_PER_MINUTE: "0",
      RATE_LIMIT_USER_PER_MINUTE: "lots",
      RATE_LIMIT_KEY_PER_MINUTE: "1.5",
      RATE_LIMIT_KEY_PREFIX: "has space",
      TRUST_PROXY: "true",
    });
    expect(found.map((p) => p.split(":")[0]).sort()).toEqual([
      "RATE_LIMIT_IP_PER_MINUTE",
      "RATE_LIMIT_KEY_PER_MINUTE",
      "RATE_LIMIT_KEY_PREFIX",
      "RATE_LIMIT_USER_PER_MINUTE",
      "REDIS_URL",
      "TRUST_PROXY",
    ]);
    expect(found.find((p) => p.startsWith("TRUST_PROXY"))).toMatch(/hop count/);
  });

  it("reads TRUST_PROXY as off, a hop count, or proxy addresses", () => {
    const trust = (value: string) => loadConfig(gatewayConfigSchema, { SERVICE_SIGNING_JWK: privateJwk, TRUST_PROXY: value }).trustProxy;
    expect(trust("false")).toBe(false);
    expect(trust("0")).toBe(false);
    expect(trust("2")).toBe(2);
    expect(trust("loopback, 10.0.0.0/8, fd00::/8")).toEqual(["loopback", "10.0.0.0/8", "fd00::/8"]);
    expect(problems({ SERVICE_SIGNING_JWK: privateJwk, TRUST_PROXY: "10.0.0.0/33" })).toEqual([expect.stringMatching(/^TRUST_PROXY: not an address/)]);
    expect(problems({ SERVICE_SIGNING_JWK: privateJwk, TRUST_PROXY: "proxy.internal" })).toEqual([expect.stringMatching(/^TRUST_PROXY:/)]);
  });

  it("treats empty variables as unset", () => {
    const config = loadConfig(gatewayConfigSchema, { SERVICE_SIGNING_JWK: privateJwk, PORT: "", MCP_ALLOWED_ORIGINS: "" });
    expect(config.port).toBe(8080);
    expect(config.allowedOrigins).toEqual([]);
  });
});
