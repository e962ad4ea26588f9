import { AppError } from "@3ngram/errors";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { createSessionCodec, SESSION_TTL_SECONDS } from "../src/ui/session.js";

const SECRET = "unit-test-secret-of-at-least-32-chars!";
const principal = { tenantId: "t-1", userId: "u-1", scopes: ["memory:read", "memory:write"], expiresAt: 0, keyId: "k-1" };
/** The tenants' users, as the memory service would answer (its own check is tested against it, in the gateway's web UI tests). */
const members = new Set(["t-1/u-1"]);
const membership = async (tenantId: string, userId: string) => members.has(`${tenantId}/${userId}`);

describe("review UI session tokens", () => {
  it("round-trip who signed in, with the 8 h expiry", async () => {
    const now = Date.UTC(2026, 0, 1);
    const codec = createSessionCodec(SECRET, { membership, now: () => now });
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
    const codec = createSessionCodec(SECRET, { membership, now: () => now });
    const { token } = await codec.issue(principal);
    const [header, payload, signature] = token.split(".");
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, "base64url").toString()), tid: "t-2" })).toString("base64url");
    expect(await codec.verify(`${header}.${forged}.${signature}`)).toBeUndefined();
    expect(await createSessionCodec(`${SECRET}-other`, { membership, now: () => now }).verify(token)).toBeUndefined();
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

  it("refuse a token dated ahead of the clock by more than the replicas' skew, and one without iat", async () => {
    const now = Date.UTC(2026, 0, 1);
    const codec = createSessionCodec(SECRET, { membership, now: () => now });
    const sign = (issuedAt: number | undefined) => {
      const jwt = new SignJWT({ tid: "t-1", scope: "memory:read" }).setProtectedHeader({ alg: "HS256" }).setSubject("u-1").setJti("j").setAudience("3ngram-ui");
      if (issuedAt !== undefined) jwt.setIssuedAt(issuedAt);
      return jwt.setExpirationTime(now / 1000 + 3 * 86_400).sign(new TextEncoder().encode(SECRET));
    };
    expect(await codec.verify(await sign(now / 1000 + 5))).toBeDefined();
    expect(await codec.verify(await sign(now / 1000 + 6))).toBeUndefined();
    expect(await codec.verify(await sign(now / 1000 + 86_400))).toBeUndefined();
    expect(await codec.verify(await sign(undefined))).toBeUndefined();
  });

  it("refuse a session whose user is not in its tenant, and fail, not pass, when that cannot be learnt", async () => {
    const now = Date.UTC(2026, 0, 1);
    const { token } = await createSessionCodec(SECRET, { membership, now: () => now }).issue({ ...principal, userId: "u-2" });
    expect(await createSessionCodec(SECRET, { membership, now: () => now }).verify(token)).toBeUndefined();
    const down = async () => {
      throw new AppError("unavailable", "memory unavailable");
    };
    await expect(createSessionCodec(SECRET, { membership: down, now: () => now }).verify(token)).rejects.toMatchObject({ reason: "unavailable" });
  });

  it("derive one CSRF token per session", async () => {
    const codec = createSessionCodec(SECRET, { membership });
    const a = (await codec.issue(principal)).session;
    const b = (await codec.issue(principal)).session;
    expect(codec.csrfToken(a)).toBe(codec.csrfToken(a));
    expect(codec.csrfToken(a)).not.toBe(codec.csrfToken(b));
    expect(createSessionCodec(`${SECRET}-other`, { membership }).csrfToken(a)).not.toBe(codec.csrfToken(a));
  });
});
