/**
 * Access tokens are JWTs (RFC 9068 profile): typ at+jwt, EdDSA, iss = our issuer, aud = the MCP
 * resource (RFC 8707), sub = the user, tid = the tenant, scope, client_id, jti, iat, one hour. The
 * resource server verifies signature, typ, iss, aud, exp, nbf and iat (neither may lie ahead of our
 * clock by more than the replicas' tolerated skew), then that sub is a user of tid (the memory
 * service says, cached briefly), and maps the claims to the same Principal an API key yields.
 */
import { randomUUID } from "node:crypto";
import { AppError, isAppError } from "@3ngram/errors";
import { SignJWT, decodeProtectedHeader, jwtVerify } from "jose";
import type { MembershipCheck } from "../auth/membership.js";
import { publicScopes } from "../auth/public-scopes.js";
import type { Principal } from "../http/locals.js";
import type { OAuthLocation } from "./issuer.js";
import { ACCESS_TOKEN_ALG, type SigningKeyRing } from "./signing-keys.js";

export const ACCESS_TOKEN_TTL_SECONDS = 3600;
const ACCESS_TOKEN_TYPE = "at+jwt";
/** Tolerated clock difference between gateway replicas. */
const CLOCK_TOLERANCE_SECONDS = 5;
/** Three base64url segments; an empty signature still counts, so an unsigned token reaches the verifier and is refused there. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export interface AccessTokenGrant {
  tenantId: string;
  userId: string;
  clientId: string;
  scopes: readonly string[];
}

export async function mintAccessToken(keys: SigningKeyRing, location: OAuthLocation, grant: AccessTokenGrant): Promise<string> {
  const { kid, signKey } = await keys.active();
  return new SignJWT({ tid: grant.tenantId, scope: grant.scopes.join(" "), client_id: grant.clientId })
    .setProtectedHeader({ alg: ACCESS_TOKEN_ALG, typ: ACCESS_TOKEN_TYPE, kid })
    .setIssuer(location.issuer())
    .setAudience(location.mcpResource())
    .setSubject(grant.userId)
    .setJti(randomUUID())
    .setIssuedAt()
    .setNotBefore("0s")
    .setExpirationTime(`${ACCESS_TOKEN_TTL_SECONDS}s`)
    .sign(signKey);
}

/**
 * Whether a bearer credential is shaped like an access token. API keys (`3ng_…`) never contain a
 * dot, so the shape alone tells the two apart.
 */
export function looksLikeJwt(token: string): boolean {
  return token.length <= 4096 && JWT_SHAPE.test(token);
}

/** The principal a token acts for, and the client it was issued to (what the per-credential rate limit counts). */
export type AccessTokenVerifier = (token: string) => Promise<Principal & { clientId: string }>;

/**
 * Rejects with AppError: unauthenticated for anything that is not a valid, current token for
 * this resource, or whose user is not in its tenant; unavailable when the signing keys cannot be
 * loaded or the membership cannot be checked.
 */
export function createAccessTokenVerifier(keys: SigningKeyRing, location: OAuthLocation, isMember: MembershipCheck): AccessTokenVerifier {
  const invalid = () => new AppError("unauthenticated", "invalid access token");
  return async (token) => {
    if (!looksLikeJwt(token)) throw invalid();
    let kid: string | undefined;
    try {
      const header = decodeProtectedHeader(token);
      kid = header.kid;
      if (header.alg !== ACCESS_TOKEN_ALG || header.typ !== ACCESS_TOKEN_TYPE) throw invalid();
    } catch {
      throw invalid();
    }
    if (kid === undefined || kid.length > 128) throw invalid();
    let key;
    try {
      key = await keys.verificationKey(kid);
    } catch (err) {
      throw isAppError(err) && err.reason === "unavailable" ? err : new AppError("unavailable", "signing keys unavailable");
    }
    if (key === undefined) throw invalid();
    let payload;
    try {
      ({ payload } = await jwtVerify(token, key, {
        algorithms: [ACCESS_TOKEN_ALG],
        typ: ACCESS_TOKEN_TYPE,
        issuer: location.issuer(),
        audience: location.mcpResource(),
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        // With maxTokenAge jose requires iat and refuses one further ahead than the tolerance (nbf
        // it checks the same way unasked); no token of ours is older than its lifetime.
        maxTokenAge: ACCESS_TOKEN_TTL_SECONDS,
        requiredClaims: ["exp", "sub", "jti", "iat"],
      }));
    } catch {
      throw invalid();
    }
    const { sub, tid, scope, exp, client_id: clientId } = payload;
    if (typeof sub !== "string" || typeof tid !== "string" || typeof scope !== "string" || typeof exp !== "number" || typeof clientId !== "string")
      throw invalid();
    // The signature proves who issued the claims, not that they still hold.
    if (!(await isMember(tid, sub))) throw invalid();
    return { tenantId: tid, userId: sub, scopes: publicScopes(scope.split(" ")), expiresAt: exp, clientId };
  };
}
