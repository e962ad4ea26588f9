/**
 * The review UI's session: a signed, expiring token in an HttpOnly cookie (docs/adr/0015).
 *
 * The cookie holds who signed in (tenant, user, the key's public scopes, the key's id for the
 * per-credential budget) and when that stops being true, signed with HS256 under the session
 * secret. It never holds the API key. Any gateway replica configured with the same secret accepts
 * it, so no session store is needed; the price is that signing out or revoking the key does not
 * end a copied token before it expires.
 *
 * CSRF tokens for signed-in forms are bound to the session: an HMAC of the token's id under the
 * same secret, so they need no second cookie and die with the session.
 */
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { SignJWT, jwtVerify } from "jose";
import type { Principal } from "../http/locals.js";

export const SESSION_COOKIE = "ui_session";
export const SESSION_TTL_SECONDS = 8 * 60 * 60;
/** The audience claim: a session token is good for the review UI and nothing else. */
const AUDIENCE = "3ngram-ui";
const ALGORITHM = "HS256";

export interface UiSession {
  tenantId: string;
  userId: string;
  scopes: string[];
  /** The API key's id when the memory service gave one (what the per-credential limit counts). */
  keyId?: string;
  /** The token's own id, which the CSRF token is derived from. */
  sessionId: string;
  /** Seconds since the epoch. */
  expiresAt: number;
}

export interface SessionCodec {
  issue(principal: Principal & { keyId?: string }): Promise<{ token: string; session: UiSession }>;
  /** The session a cookie value stands for, or undefined when it is missing, forged, foreign or expired. */
  verify(token: string | undefined): Promise<UiSession | undefined>;
  /** The CSRF token every form of this session must send back. */
  csrfToken(session: UiSession): string;
}

/** A per-process secret: fine for one gateway, but sessions then die with the process and do not cross replicas. */
export function generateSessionSecret(): string {
  return randomBytes(32).toString("base64url");
}

export function createSessionCodec(secret: string, options: { ttlSeconds?: number; now?: () => number } = {}): SessionCodec {
  const key = new TextEncoder().encode(secret);
  const ttlSeconds = options.ttlSeconds ?? SESSION_TTL_SECONDS;
  const nowSeconds = () => Math.floor((options.now ?? Date.now)() / 1000);

  return {
    async issue(principal) {
      const sessionId = randomUUID();
      const issuedAt = nowSeconds();
      const expiresAt = issuedAt + ttlSeconds;
      const token = await new SignJWT({ tid: principal.tenantId, scope: principal.scopes.join(" "), ...(principal.keyId ? { kid: principal.keyId } : {}) })
        .setProtectedHeader({ alg: ALGORITHM, typ: "JWT" })
        .setSubject(principal.userId)
        .setAudience(AUDIENCE)
        .setJti(sessionId)
        .setIssuedAt(issuedAt)
        .setExpirationTime(expiresAt)
        .sign(key);
      const session: UiSession = { tenantId: principal.tenantId, userId: principal.userId, scopes: [...principal.scopes], sessionId, expiresAt };
      if (principal.keyId) session.keyId = principal.keyId;
      return { token, session };
    },

    async verify(token) {
      if (token === undefined || token.length === 0 || token.length > 4096) return undefined;
      try {
        const { payload } = await jwtVerify(token, key, {
          algorithms: [ALGORITHM],
          audience: AUDIENCE,
          requiredClaims: ["sub", "jti", "exp", "tid"],
          currentDate: new Date(nowSeconds() * 1000),
          clockTolerance: 0,
        });
        const { sub, jti, exp, tid, scope, kid } = payload;
        if (typeof sub !== "string" || typeof jti !== "string" || typeof exp !== "number" || typeof tid !== "string" || typeof scope !== "string")
          return undefined;
        const session: UiSession = { tenantId: tid, userId: sub, scopes: scope.split(" ").filter(Boolean), sessionId: jti, expiresAt: exp };
        if (typeof kid === "string" && kid.length > 0) session.keyId = kid;
        return session;
      } catch {
        return undefined;
      }
    },

    csrfToken(session) {
      return createHmac("sha256", key).update(`csrf:${session.sessionId}`).digest("base64url");
    },
  };
}
