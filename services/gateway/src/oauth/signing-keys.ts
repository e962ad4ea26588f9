/**
 * The access-token signing keys, held by the memory service (so every gateway replica and
 * standalone mode share them without configuration) and cached here. The active key signs; it and
 * recently retired keys verify. A token naming a kid we do not know triggers one refetch (at most
 * every MIN_REFETCH_MS), which is how a replica learns of a rotation another one saw first.
 */
import { SCOPES } from "@3ngram/rpc";
import { importJWK, type CryptoKey, type JWK } from "jose";
import type { MemoryPeer } from "../clients/memory.js";

export const ACCESS_TOKEN_ALG = "EdDSA";
/** How long the cached set is trusted before the active key is asked for again. */
const REFRESH_MS = 5 * 60_000;
/** Unknown kids are common in attacks; bound how often they can make us call memory. */
const MIN_REFETCH_MS = 10_000;

interface CachedKey {
  kid: string;
  publicJwk: JWK;
  verifyKey: CryptoKey | Uint8Array;
}

interface KeySet {
  fetchedAt: number;
  active: { kid: string; signKey: CryptoKey | Uint8Array };
  keys: Map<string, CachedKey>;
}

export interface SigningKeyRing {
  active(): Promise<{ kid: string; signKey: CryptoKey | Uint8Array }>;
  verificationKey(kid: string): Promise<CryptoKey | Uint8Array | undefined>;
  /** Public JWKs for /.well-known/jwks.json (only kty, crv, x, kid, alg, use). */
  publicJwks(): Promise<JWK[]>;
}

export function createSigningKeyRing(memory: MemoryPeer, options: { now?: () => number } = {}): SigningKeyRing {
  const now = options.now ?? Date.now;
  let current: KeySet | undefined;
  let inFlight: Promise<KeySet> | undefined;

  const fetchKeys = (): Promise<KeySet> => {
    inFlight ??= (async () => {
      try {
        const response = await memory.oauth.getSigningKeys({}, { identity: { scopes: [SCOPES.internalAuth] } });
        const keys = new Map<string, CachedKey>();
        let active: KeySet["active"] | undefined;
        for (const key of response.keys) {
          const publicJwk = pickPublic(JSON.parse(key.publicJwkJson) as JWK);
          keys.set(key.kid, { kid: key.kid, publicJwk, verifyKey: await importJWK(publicJwk, ACCESS_TOKEN_ALG) });
          if (key.active && key.privateJwkJson !== undefined) {
            active = { kid: key.kid, signKey: await importJWK(JSON.parse(key.privateJwkJson) as JWK, ACCESS_TOKEN_ALG) };
          }
        }
        if (active === undefined) throw new Error("memory returned no active signing key");
        current = { fetchedAt: now(), active, keys };
        return current;
      } finally {
        inFlight = undefined;
      }
    })();
    return inFlight;
  };

  const fresh = async (): Promise<KeySet> => (current !== undefined && now() - current.fetchedAt < REFRESH_MS ? current : fetchKeys());

  return {
    async active() {
      return (await fresh()).active;
    },
    async verificationKey(kid) {
      const set = await fresh();
      const known = set.keys.get(kid);
      if (known !== undefined) return known.verifyKey;
      if (now() - set.fetchedAt < MIN_REFETCH_MS) return undefined;
      return (await fetchKeys()).keys.get(kid)?.verifyKey;
    },
    async publicJwks() {
      return [...(await fresh()).keys.values()].map((k) => k.publicJwk);
    },
  };
}

/** Only public members ever leave: a JWK with a `d` must not be published by mistake. */
function pickPublic(jwk: JWK): JWK {
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, kid: jwk.kid, alg: ACCESS_TOKEN_ALG, use: "sig" } as JWK;
}
