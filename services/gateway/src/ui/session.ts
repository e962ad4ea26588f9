/**
 * The review UI's session: a signed, expiring token in an HttpOnly cookie (docs/adr/0015).
 *
 * The cookie holds who signed in (tenant, user, the key's public scopes, the key's id for the
 * per-credential budget) and when that stops being true, signed with HS256 under the session
 * secret. It never holds the API key. Any gateway replica configured with the same secret accepts
 * it, so no session store is needed; the price is that signing out or revoking the key does not
 * end a copied token before it expires. What the signature cannot vouch for is checked on every
 * request: the token must not claim to be issued in the future, and its user must still belong to
 * its tenant (asked of the memory service, cached briefly: ../auth/membership.ts).
 *
 * CSRF tokens for signed-in forms are bound to the session: an HMAC of the token's id under the
 * same secret, so they need no second cookie and die with the session.
 */
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { SignJWT, jwtVerify } from "jose";
import type { MembershipCheck } from "../auth/membership.js";
import type { Principal } from "../http/locals.js";

export const SESSION_COOKIE = "ui_session";
export const SESSION_TTL_SECONDS = 8 * 60 * 60;
/** The audience claim: a session token is good for the review UI and nothing else. */
const AUDIENCE = "3ngram-ui";
const ALGORITHM = "HS256";
/**
 * How far ahead of our clock a session's iat may be: another replica may have issued it. Checked
 * here rather than by jose's maxTokenAge, whose tolerance would also stretch exp, which stays exact.
 */
const ISSUED_AT_SKEW_SECONDS = 5;

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
  /**
   * The session a cookie value stands for, or undefined when it is missing, forged, foreign,
   * expired, dated in the future, or its user is no longer in its tenant. Rejects with AppError
   * unavailable when that last cannot be learnt.
   */
  verify(token: string | undefined): Promise<UiSession | undefined>;
  /** The CSRF token every form of this session must send back. */
  csrfToken(session: UiSession): string;
}

/** A per-process secret: fine for one gateway, but sessions then die with the process and do not cross replicas. */
export function generateSessionSecret(): string {
  return randomBytes(32).toString("base64url");
}

export function createSessionCodec(secret: string, options: { membership: MembershipCheck; ttlSeconds?: number; now?: () => number }): SessionCodec {
  const key = new TextEncoder().encode(secret);
  const ttlSeconds = options.ttlSeconds ?? SESSION_TTL_SECONDS;
  const nowSeconds = () => Math.floor((options.now ?? Date.now)() / 1000);

  /** The session a cookie's signature and claims stand for, or undefined. */
  const decode = async (token: string | undefined): Promise<UiSession | undefined> => {
    if (token === undefined || token.length === 0 || token.length > 4096) return undefined;
    try {
      const now = nowSeconds();
      const { payload } = await jwtVerify(token, key, {
        algorithms: [ALGORITHM],
        audience: AUDIENCE,
        requiredClaims: ["sub", "jti", "exp", "tid", "iat"],
        currentDate: new Date(now * 1000),
        clockTolerance: 0,
      });
      const { sub, jti, exp, iat, tid, scope, kid } = payload;
      if (typeof sub !== "string" || typeof jti !== "string" || typeof exp !== "number" || typeof tid !== "string" || typeof scope !== "string")
        return undefined;
      if (typeof iat !== "number" || iat > now + ISSUED_AT_SKEW_SECONDS) return undefined;
      const session: UiSession = { tenantId: tid, userId: sub, scopes: scope.split(" ").filter(Boolean), sessionId: jti, expiresAt: exp };
      if (typeof kid === "string" && kid.length > 0) session.keyId = kid;
      return session;
    } catch {
      return undefined;
    }
  };

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
      const session = await decode(token);
      // Outside decode's catch: a membership that cannot be checked is an outage, not a bad cookie.
      if (session === undefined || !(await options.membership(session.tenantId, session.userId))) return undefined;
      return session;
    },

    csrfToken(session) {
      return createHmac("sha256", key).update(`csrf:${session.sessionId}`).digest("base64url");
    },
  };
}
