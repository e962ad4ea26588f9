import { describe, expect, it } from "vitest";
import { accessTokenCredential, apiKeyCredential, clientIpLimitKey, credentialLimitKey, userLimitKey } from "../src/ratelimit/keys.js";

describe("rate-limit keys", () => {
  it("counts an API key by its id, or by a digest of the key when no id is known, never by the key", () => {
    const key = "3ng_abcdefgh_0123456789012345678901234567890123456789012";
    expect(credentialLimitKey(apiKeyCredential(key, "0190f0c2-0000-7000-8000-000000000001"))).toBe("api_key:0190f0c2-0000-7000-8000-000000000001");
    const digested = credentialLimitKey(apiKeyCredential(key, ""));
    expect(digested).toMatch(/^api_key:sha256-[0-9a-f]{64}$/);
    expect(digested).not.toContain(key);
    expect(credentialLimitKey(apiKeyCredential(key, undefined))).toBe(digested);
  });

  it("counts OAuth access tokens by their client's grant for the user, so a refreshed token shares the budget", () => {
    const alice = { tenantId: "t1", userId: "u1" };
    const client = "https://client.example/oauth/metadata.json";
    const key = credentialLimitKey(accessTokenCredential(client, alice));
    expect(key).toMatch(/^oauth:t1:u1:[0-9a-f]{32}$/);
    expect(key).not.toContain("client.example");
    expect(credentialLimitKey(accessTokenCredential(client, { ...alice }))).toBe(key);
    expect(credentialLimitKey(accessTokenCredential("0190f0c2-0000-7000-8000-000000000009", alice))).not.toBe(key);
    expect(credentialLimitKey(accessTokenCredential(client, { tenantId: "t1", userId: "u2" }))).not.toBe(key);
  });

  it("keys users by tenant and user, since user ids are only unique within a tenant", () => {
    expect(userLimitKey({ tenantId: "t1", userId: "u1" })).toBe("t1:u1");
    expect(userLimitKey({ tenantId: "t2", userId: "u1" })).not.toBe(userLimitKey({ tenantId: "t1", userId: "u1" }));
  });

  it("counts IPv4 (also IPv4-mapped) per address and IPv6 per /64", () => {
    expect(clientIpLimitKey("203.0.113.7")).toBe("203.0.113.7");
    expect(clientIpLimitKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(clientIpLimitKey("2001:db8:1:2::1")).toBe("2001:db8:1:2::/64");
    expect(clientIpLimitKey("2001:0DB8:0001:0002:ffff:0:0:9")).toBe("2001:db8:1:2::/64");
    expect(clientIpLimitKey("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(clientIpLimitKey("::1")).toBe("0:0:0:0::/64");
    expect(clientIpLimitKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(clientIpLimitKey("2001:db8:1:3::1")).not.toBe(clientIpLimitKey("2001:db8:1:2::1"));
  });

  it("puts requests without a usable address in one shared bucket", () => {
    expect(clientIpLimitKey(undefined)).toBe("unknown");
    expect(clientIpLimitKey("")).toBe("unknown");
    expect(clientIpLimitKey("not an ip")).toBe("unknown");
  });
});
