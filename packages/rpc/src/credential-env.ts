import { z } from "zod";
import type { JWK } from "jose";
import { parseJwk, parseJwkSet } from "./credentials.js";

/**
 * Environment schemas for service-credential keys, shared by every service's config so the
 * rules (and the promise never to echo a secret in an error) live in one place.
 */

/** SERVICE_SIGNING_JWK: the caller's private Ed25519 key as one JWK object. */
export const signingKeyEnv = z.string().transform((raw, ctx): JWK => {
  try {
    const jwk = parseJwk(raw);
    if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || typeof jwk.d !== "string") throw new Error("not a private Ed25519 key");
    return jwk;
  } catch {
    // Never echo the value: it is a secret.
    ctx.addIssue({ code: "custom", message: "must be a private Ed25519 JWK (kty OKP, crv Ed25519, with d)" });
    return z.NEVER;
  }
});

/** SERVICE_TRUSTED_JWKS: the public keys a server accepts credentials from, as a JSON array. */
export const trustedKeysEnv = z.string().transform((raw, ctx): JWK[] => {
  try {
    const keys = parseJwkSet(raw);
    if (keys.length === 0 || keys.some((k) => k.kty !== "OKP" || typeof k.x !== "string")) throw new Error("not public Ed25519 keys");
    return keys;
  } catch {
    ctx.addIssue({ code: "custom", message: "must be a JSON array of public Ed25519 JWKs" });
    return z.NEVER;
  }
});
