import { SignJWT, importJWK } from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CredentialSigner, CredentialVerifier, generateServiceKeyPair, SCOPES } from "../src/index.js";

const keys = await generateServiceKeyPair();
const identity = { tenantId: "7f0c2d2e-0000-4000-8000-000000000001", userId: "u-1", scopes: [SCOPES.read], actor: "user_mcp" };

afterEach(() => {
  vi.useRealTimers();
});

describe("service credentials, signed and verified once per identity for a while", () => {
  it("reuses a credential for the same identity and audience, and signs a new one for any difference", async () => {
    const signer = await CredentialSigner.fromJwk("gateway", keys.privateJwk);
    const first = await signer.sign(identity, "search");
    expect(await signer.sign({ ...identity, scopes: [SCOPES.read] }, "search")).toBe(first);
    const others = await Promise.all([
      signer.sign(identity, "memory"),
      signer.sign({ ...identity, tenantId: "7f0c2d2e-0000-4000-8000-000000000002" }, "search"),
      signer.sign({ ...identity, userId: "u-2" }, "search"),
      signer.sign({ ...identity, scopes: [SCOPES.read, SCOPES.write] }, "search"),
      signer.sign({ ...identity, actor: "user_api" }, "search"),
    ]);
    expect(new Set([first, ...others]).size).toBe(6);
    const verifier = new CredentialVerifier("search", [keys.publicJwk]);
    expect(await verifier.verify(first)).toEqual({ issuer: "gateway", ...identity });
  });

  it("signs afresh once a credential has been reused for 15 s, long before it expires", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const signer = await CredentialSigner.fromJwk("gateway", keys.privateJwk);
    const first = await signer.sign(identity, "search");
    vi.setSystemTime(Date.now() + 14_000);
    expect(await signer.sign(identity, "search")).toBe(first);
    vi.setSystemTime(Date.now() + 2_000);
    const second = await signer.sign(identity, "search");
    expect(second).not.toBe(first);
    // The fresh one is valid now; the old one has 44 s left and is valid too.
    const verifier = new CredentialVerifier("search", [keys.publicJwk]);
    await expect(verifier.verify(second)).resolves.toMatchObject({ tenantId: identity.tenantId });
    await expect(verifier.verify(first)).resolves.toMatchObject({ tenantId: identity.tenantId });
  });

  it("refuses a remembered credential once it has expired, and never remembers a refused one", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const signer = await CredentialSigner.fromJwk("gateway", keys.privateJwk);
    const verifier = new CredentialVerifier("search", [keys.publicJwk]);
    const token = await signer.sign(identity, "search");
    await expect(verifier.verify(token)).resolves.toMatchObject({ userId: "u-1" });
    vi.setSystemTime(Date.now() + 61_000);
    await expect(verifier.verify(token)).rejects.toMatchObject({ reason: "unauthenticated" });

    // Signed by a key the verifier does not trust: refused every time, however often it is sent.
    const stranger = await generateServiceKeyPair();
    const forged = await new SignJWT({ scope: SCOPES.read, tid: identity.tenantId })
      .setProtectedHeader({ alg: "EdDSA", kid: keys.publicJwk.kid! })
      .setIssuer("gateway")
      .setAudience("search")
      .setIssuedAt()
      .setExpirationTime("60s")
      .sign(await importJWK(stranger.privateJwk, "EdDSA"));
    for (let i = 0; i < 2; i++) await expect(verifier.verify(forged)).rejects.toMatchObject({ reason: "unauthenticated" });
  });

  it("answers a verified caller that later calls cannot change", async () => {
    const signer = await CredentialSigner.fromJwk("gateway", keys.privateJwk);
    const verifier = new CredentialVerifier("search", [keys.publicJwk]);
    const token = await signer.sign(identity, "search");
    const caller = await verifier.verify(token);
    expect(() => (caller.scopes as string[]).push(SCOPES.write)).toThrow(TypeError);
    expect((await verifier.verify(token)).scopes).toEqual([SCOPES.read]);
  });
});
