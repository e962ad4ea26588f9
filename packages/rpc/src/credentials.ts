/**
 * Service credentials: a short-lived JWT the caller (gateway, consolidator) signs for every gRPC
 * call, carrying the tenant, user and scopes it acts for. Memory and search verify it against a
 * local set of trusted public keys and refuse calls without one. The tenant therefore comes from
 * a verified signature, never from a plain header or a request field.
 *
 * Keys are Ed25519 (EdDSA): only callers hold a private key, so a compromised search pod cannot
 * mint credentials for memory writes.
 */
import { SignJWT, createLocalJWKSet, exportJWK, generateKeyPair, importJWK, jwtVerify, type JWK } from "jose";
import { AppError } from "@3ngram/errors";

/** Scopes a credential may carry. memory:* mirror the public API scopes; internal:* are service-only. */
export const SCOPES = {
  read: "memory:read",
  write: "memory:write",
  /** Erase memories (REST and the operator command only): never granted unless asked for by name. */
  erase: "memory:erase",
  /** Resolve API keys to tenants (the gateway, before it knows the tenant). */
  internalAuth: "internal:auth",
  /** Store embeddings computed out of band (the consolidator). */
  internalEmbed: "internal:embed",
  /** Background consolidation: list tenants, scan similar pairs, hand over proposals, sweep commitments (the consolidator). */
  internalConsolidate: "internal:consolidate",
} as const;
export type Scope = (typeof SCOPES)[keyof typeof SCOPES];

/**
 * The scopes a user's credential (API key, OAuth grant, UI session) may carry; the rest are
 * service scopes no user credential ever holds. One list, so key rows, OAuth metadata, token
 * filtering and grant checks cannot drift apart.
 */
export const PUBLIC_SCOPES = [SCOPES.read, SCOPES.write, SCOPES.erase] as const;

/**
 * What a new key holds and an OAuth client gets when it names no scope: everything but
 * memory:erase, which is granted only when asked for by name (docs/erasure.md).
 */
export const DEFAULT_SCOPES = [SCOPES.read, SCOPES.write] as const;

export interface CallerIdentity {
  /** Absent only for pre-tenant calls such as API-key resolution. */
  tenantId?: string;
  userId?: string;
  scopes: readonly string[];
  /** Which surface the call came through, recorded on audit events ("user_mcp", "user_api", "worker", …). */
  actor?: string;
}

export interface VerifiedCaller extends CallerIdentity {
  /** The signing service, e.g. "gateway". */
  issuer: string;
}

const ALGORITHM = "EdDSA";
/** Long enough for a slow call, short enough that a leaked credential is useless soon. */
const CREDENTIAL_TTL_SECONDS = 60;
/**
 * A signed credential is reused for calls with the same identity and audience for this long, so
 * it always has at least 45 s of its lifetime left when sent. Signing costs ~0.5-0.7 ms of CPU
 * (Ed25519) and verifying as much again, on every hop of every request; a busy gateway sends the
 * same identity many times a second.
 */
const CREDENTIAL_REUSE_MS = 15_000;
/** Entries each cache holds at most (identities on the signing side, credentials on the verifying side). */
const CREDENTIAL_CACHE_SIZE = 10_000;

/** A small LRU over a Map (which iterates in insertion order, so the first key is the least recent). */
class Recent<V> {
  private readonly entries = new Map<string, V>();
  constructor(private readonly capacity: number) {}

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}

export interface ServiceKeyPair {
  privateJwk: JWK;
  publicJwk: JWK;
}

export async function generateServiceKeyPair(kid: string = crypto.randomUUID()): Promise<ServiceKeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(ALGORITHM, { crv: "Ed25519", extractable: true });
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: ALGORITHM };
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: ALGORITHM, use: "sig" };
  return { privateJwk, publicJwk };
}

export class CredentialSigner {
  private readonly recent = new Recent<{ token: Promise<string>; reuseUntil: number }>(CREDENTIAL_CACHE_SIZE);

  private constructor(
    private readonly issuer: string,
    private readonly kid: string | undefined,
    private readonly key: Awaited<ReturnType<typeof importJWK>>,
  ) {}

  static async fromJwk(issuer: string, privateJwk: JWK): Promise<CredentialSigner> {
    if (!privateJwk.d) throw new Error("service signing key must be a private JWK");
    return new CredentialSigner(issuer, privateJwk.kid, await importJWK(privateJwk, ALGORITHM));
  }

  /** A credential for this identity and audience: a recent one if it still has most of its life left, else a fresh one. */
  sign(identity: CallerIdentity, audience: string): Promise<string> {
    const key = [audience, identity.tenantId ?? "", identity.userId ?? "", identity.actor ?? "", identity.scopes.join(" ")].join("\u0000");
    const now = Date.now();
    const known = this.recent.get(key);
    if (known !== undefined && known.reuseUntil > now) return known.token;
    const token = this.signFresh(identity, audience);
    this.recent.set(key, { token, reuseUntil: now + CREDENTIAL_REUSE_MS });
    token.catch(() => this.recent.delete(key));
    return token;
  }

  private async signFresh(identity: CallerIdentity, audience: string): Promise<string> {
    const claims: Record<string, unknown> = { scope: identity.scopes.join(" ") };
    if (identity.tenantId) claims.tid = identity.tenantId;
    if (identity.actor) claims.act = identity.actor;
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: ALGORITHM, ...(this.kid ? { kid: this.kid } : {}) })
      .setIssuer(this.issuer)
      .setAudience(audience)
      .setIssuedAt()
      .setExpirationTime(`${CREDENTIAL_TTL_SECONDS}s`);
    if (identity.userId) jwt.setSubject(identity.userId);
    return jwt.sign(this.key);
  }
}

export class CredentialVerifier {
  private readonly keys: ReturnType<typeof createLocalJWKSet>;
  /**
   * Credentials already verified, by their exact text, until they expire: a caller reuses one for
   * many calls (see CredentialSigner), and the same bytes verify the same way every time.
   */
  private readonly verified = new Recent<{ caller: VerifiedCaller; expiresAt: number }>(CREDENTIAL_CACHE_SIZE);

  constructor(
    private readonly audience: string,
    trustedPublicJwks: JWK[],
  ) {
    if (trustedPublicJwks.length === 0) throw new Error("at least one trusted service key is required");
    // Only public members are kept, so a private key passed here by mistake is never used to verify.
    const publicOnly = trustedPublicJwks.map(({ d: _d, ...rest }) => rest);
    this.keys = createLocalJWKSet({ keys: publicOnly });
  }

  async verify(token: string | undefined): Promise<VerifiedCaller> {
    if (!token) throw new AppError("unauthenticated", "missing service credential");
    const known = this.verified.get(token);
    if (known !== undefined && known.expiresAt > Date.now()) return known.caller;
    try {
      const { payload } = await jwtVerify(token, this.keys, { audience: this.audience, algorithms: [ALGORITHM] });
      if (typeof payload.iss !== "string") throw new Error("no issuer");
      const tenantId = typeof payload.tid === "string" ? payload.tid : undefined;
      const scope = typeof payload.scope === "string" ? payload.scope : "";
      const caller: VerifiedCaller = {
        issuer: payload.iss,
        ...(tenantId ? { tenantId } : {}),
        ...(payload.sub ? { userId: payload.sub } : {}),
        ...(typeof payload.act === "string" ? { actor: payload.act } : {}),
        scopes: scope.split(" ").filter(Boolean),
      };
      // Only a credential with an expiry is remembered (ours always carry one); the cached answer
      // is shared by later calls, so it is frozen.
      Object.freeze(caller.scopes);
      if (typeof payload.exp === "number") this.verified.set(token, { caller: Object.freeze(caller), expiresAt: payload.exp * 1000 });
      return caller;
    } catch {
      // One uniform answer: the caller learns nothing about why its credential failed.
      throw new AppError("unauthenticated", "invalid service credential");
    }
  }
}

/** Parses the JWK env forms: a private key is one JWK object, trusted keys a JSON array (or one object). */
export function parseJwk(json: string): JWK {
  const value: unknown = JSON.parse(json);
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("expected one JWK object");
  return value as JWK;
}

export function parseJwkSet(json: string): JWK[] {
  const value: unknown = JSON.parse(json);
  const list = Array.isArray(value) ? value : [value];
  if (!list.every((k) => typeof k === "object" && k !== null)) throw new Error("expected JWK objects");
  return list as JWK[];
}
