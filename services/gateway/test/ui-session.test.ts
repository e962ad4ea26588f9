import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { createSessionCodec, SESSION_TTL_SECONDS } from "../src/ui/session.js";

const SECRET = "unit-test-secret-of-at-least-32-chars!";
const principal = { tenantId: "t-1", userId: "u-1", scopes: ["memory:read", "memory:write"], expiresAt: 0, keyId: "k-1" };

describe("review UI session tokens", () => {
  it("round-trip who signed in, with the 8 h expiry", async () => {
    const now = Date.UTC(2026, 0, 1);
    const codec = createSessionCodec(SECRET, { now: () => now });
    const { token, session } = await codec.issue(principal);
    expect(await codec.verify(token)).toEqual(session);
    expect(session).toMatchObject({
      tenantId: "t-1",
      userId: "u-1",
      scopes: ["memory:read", "memory:write"],
      keyId: "k-1",
      expiresAt: now / 1000 + SESSION_TTL_SECONDS,
    });
  });

  it("expire at exp, and refuse tampered, foreign-secret and wrong-audience tokens", async () => {
    let now = Date.UTC(2026, 0, 1);
    const codec = createSessionCodec(SECRET, { now: () => now });
    const { token } = await codec.issue(principal);
    const [header, payload, signature] = token.split(".");
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, "base64url").toString()), tid: "t-2" })).toString("base64url");
    expect(await codec.verify(`${header}.${forged}.${signature}`)).toBeUndefined();
    expect(await createSessionCodec(`${SECRET}-other`, { now: () => now }).verify(token)).toBeUndefined();
    const otherAudience = await new SignJWT({ tid: "t-1", scope: "memory:read" })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("u-1")
      .setJti("j")
      .setAudience("somewhere-else")
      .setExpirationTime(now / 1000 + 60)
      .sign(new TextEncoder().encode(SECRET));
    expect(await codec.verify(otherAudience)).toBeUndefined();
    expect(await codec.verify(undefined)).toBeUndefined();
    now += SESSION_TTL_SECONDS * 1000 - 1000;
    expect(await codec.verify(token)).toBeDefined();
    now += 1000;
    expect(await codec.verify(token)).toBeUndefined();
  });

  it("derive one CSRF token per session", async () => {
    const codec = createSessionCodec(SECRET);
    const a = (await codec.issue(principal)).session;
    const b = (await codec.issue(principal)).session;
    expect(codec.csrfToken(a)).toBe(codec.csrfToken(a));
    expect(codec.csrfToken(a)).not.toBe(codec.csrfToken(b));
    expect(createSessionCodec(`${SECRET}-other`).csrfToken(a)).not.toBe(codec.csrfToken(a));
  });
});
