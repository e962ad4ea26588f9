/**
 * OAuth 2.1 grant storage: clients, single-use authorization codes bound to PKCE, refresh tokens
 * rotated with reuse detection, and the access-token signing keys. The gateway speaks the
 * protocol; the rules about what may be redeemed, by whom and how often live here.
 *
 * Every failure a client could provoke to learn something is uniform: a bad code, a wrong
 * verifier, a wrong redirect_uri and a replay all answer the same `invalid_grant`.
 */
import { createHash, generateKeyPairSync, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { AppError } from "@3ngram/errors";
import { PUBLIC_SCOPES } from "@3ngram/rpc";
import { withRole, withTenant } from "@3ngram/db";
import { clientMetadataDocumentSchema, oauthClientMetadataSchema, parseInput, type OAuthClientMetadata } from "@3ngram/schema";
import { uuidv7 } from "uuidv7";
import {
  collectOAuthGarbage,
  consumeAuthorizationCode,
  insertAuthorizationCode,
  insertClient,
  insertRefreshToken,
  insertSigningKeyIfNone,
  revokeRefreshToken,
  rotateRefreshToken,
  selectClient,
  selectSigningKeys,
  touchClient,
  upsertMetadataDocumentClient,
  type OAuthClientRow,
  type SigningKeyRow,
} from "../db/oauth.js";
import { sha256Hex } from "./api-keys.js";
import type { Actor, MemoryDeps } from "./deps.js";

/** Long enough to follow a redirect, short enough that a leaked code is useless (OAuth 2.1 §4.1.2). */
const AUTHORIZATION_CODE_TTL_SECONDS = 60;
const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
/** A retired signing key keeps verifying this long: well past the 1 h access-token lifetime. */
const SIGNING_KEY_RETENTION_SECONDS = 24 * 3600;
export const DEFAULT_CLIENT_IDLE_DAYS = 30;

const GRANTABLE = new Set<string>(PUBLIC_SCOPES);
const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** RFC 7636 §4.1: 43–128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
const MAX_PRESENTED_LENGTH = 512;

export type OAuthDeps = Pick<MemoryDeps, "pool" | "runtimeRole">;

/** 32 random bytes, base64url: the entropy of every code, token and secret we mint. */
function mintSecret(): string {
  return randomBytes(32).toString("base64url");
}

function invalidGrant(): AppError {
  return new AppError("invalid_input", "invalid_grant: the grant is invalid, expired, revoked or was issued to another client", { field: "grant" });
}

function invalidClient(): AppError {
  return new AppError("unauthenticated", "invalid_client: client authentication failed", { field: "client_id" });
}

function write<T>(deps: OAuthDeps, fn: Parameters<typeof withRole<T>>[2]): Promise<T> {
  return withRole(deps.pool, deps.runtimeRole, fn, { readOnly: false });
}

function parseMetadataJson(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    throw new AppError("invalid_input", "metadata: not JSON", { field: "metadata" });
  }
}

export interface RegisteredClient {
  client: OAuthClientRow;
  /** Clear only here, once; the database keeps its hash. */
  clientSecret?: string;
}

/** RFC 7591 registration: a UUID client_id, and a secret when the client asked for a confidential method. */
export async function registerClient(deps: OAuthDeps, metadataJson: string): Promise<RegisteredClient> {
  const metadata = parseInput(oauthClientMetadataSchema, parseMetadataJson(metadataJson));
  const confidential = metadata.token_endpoint_auth_method !== "none";
  const clientSecret = confidential ? mintSecret() : undefined;
  const client = await write(deps, (db) =>
    insertClient(db, {
      clientId: randomUUID(),
      tokenEndpointAuthMethod: metadata.token_endpoint_auth_method,
      clientSecretHash: clientSecret === undefined ? null : sha256Hex(clientSecret),
      metadata,
    }),
  );
  return clientSecret === undefined ? { client } : { client, clientSecret };
}

/** A fetched Client ID Metadata Document, recorded so codes and tokens can reference the client. */
export async function saveMetadataDocumentClient(deps: OAuthDeps, clientId: string, metadataJson: string): Promise<OAuthClientRow> {
  const document = parseInput(clientMetadataDocumentSchema, parseMetadataJson(metadataJson));
  if (document.client_id !== clientId) throw new AppError("invalid_input", "client_id: must equal the document's client_id", { field: "client_id" });
  const { client_id: _url, ...metadata } = document;
  const row = await write(deps, (db) => upsertMetadataDocumentClient(db, clientId, metadata));
  if (row === null) throw new AppError("conflict", "client_id: already registered dynamically", { field: "client_id" });
  return row;
}

export async function getClient(deps: OAuthDeps, clientId: string): Promise<OAuthClientRow> {
  if (clientId.length === 0 || clientId.length > 2048) throw new AppError("not_found", "no such client");
  const row = await withRole(deps.pool, deps.runtimeRole, (db) => selectClient(db, clientId));
  if (row === null) throw new AppError("not_found", "no such client");
  return row;
}

export interface CodeRequest {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  scopes: string[];
  resource: string;
}

/** Mints a code for the consenting user (the credential's tenant and user). */
export async function createAuthorizationCode(deps: OAuthDeps, actor: Actor, input: CodeRequest): Promise<{ code: string; expiresAt: Date }> {
  if (actor.userId === undefined) throw new AppError("invalid_input", "user: the credential names no user", { field: "user" });
  if (!CODE_CHALLENGE.test(input.codeChallenge)) throw new AppError("invalid_input", "code_challenge: must be an S256 challenge", { field: "code_challenge" });
  const scopes = [...new Set(input.scopes)];
  if (scopes.length === 0 || scopes.some((s) => !GRANTABLE.has(s))) throw new AppError("invalid_input", "scope: unknown or empty", { field: "scope" });
  if (input.redirectUri.length === 0 || input.resource.length === 0) throw new AppError("invalid_input", "redirect_uri: required", { field: "redirect_uri" });
  await getClient(deps, input.clientId);
  const code = mintSecret();
  const userId = actor.userId;
  const expiresAt = await withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId }, (db) =>
    insertAuthorizationCode(db, {
      codeHash: sha256Hex(code),
      tenantId: actor.tenantId,
      userId,
      clientId: input.clientId,
      redirectUri: input.redirectUri,
      codeChallenge: input.codeChallenge,
      scopes,
      resource: input.resource,
      familyId: uuidv7(),
      ttlSeconds: AUTHORIZATION_CODE_TTL_SECONDS,
    }),
  );
  return { code, expiresAt };
}

export interface Grant {
  tenantId: string;
  userId: string;
  clientId: string;
  scopes: string[];
  resource: string;
  refreshToken?: string;
}

/**
 * Checks who is calling the token endpoint: a public client presents no secret, a confidential
 * one presents the secret it was given (compared by digest, in constant time).
 */
async function authenticateClient(deps: OAuthDeps, clientId: string, clientSecret: string | undefined): Promise<OAuthClientRow> {
  if (clientId.length === 0 || clientId.length > 2048) throw invalidClient();
  const client = await withRole(deps.pool, deps.runtimeRole, (db) => selectClient(db, clientId));
  if (client === null) throw invalidClient();
  if (client.clientSecretHash === null) {
    if (clientSecret !== undefined) throw invalidClient();
    return client;
  }
  if (clientSecret === undefined || clientSecret.length > MAX_PRESENTED_LENGTH) throw invalidClient();
  const presented = Buffer.from(sha256Hex(clientSecret), "hex");
  if (!timingSafeEqual(presented, Buffer.from(client.clientSecretHash, "hex"))) throw invalidClient();
  return client;
}

function allowsRefresh(client: OAuthClientRow): boolean {
  const grantTypes = (client.metadata as Partial<OAuthClientMetadata>).grant_types;
  return Array.isArray(grantTypes) && grantTypes.includes("refresh_token");
}

function s256(verifier: string): string {
  return createHash("sha256").update(verifier).digest("base64url");
}

/**
 * Consume first, then verify: the code is burned by the atomic UPDATE before any check, so a
 * wrong verifier or redirect_uri cannot be retried against the same code, and of two concurrent
 * redemptions exactly one gets past the UPDATE.
 */
export async function redeemAuthorizationCode(
  deps: OAuthDeps,
  input: { code: string; clientId: string; clientSecret?: string; redirectUri: string; codeVerifier: string },
): Promise<Grant> {
  const client = await authenticateClient(deps, input.clientId, input.clientSecret);
  if (input.code.length === 0 || input.code.length > MAX_PRESENTED_LENGTH) throw invalidGrant();
  const consumed = await write(deps, (db) => consumeAuthorizationCode(db, sha256Hex(input.code)));
  if (consumed.outcome !== "redeemed") throw invalidGrant();
  const { tenantId, userId, clientId, redirectUri, codeChallenge, scopes, resource, familyId } = consumed;
  if (tenantId === null || userId === null || scopes === null || resource === null || familyId === null) throw invalidGrant();
  if (clientId !== client.clientId || redirectUri !== input.redirectUri) throw invalidGrant();
  if (!CODE_VERIFIER.test(input.codeVerifier) || s256(input.codeVerifier) !== codeChallenge) throw invalidGrant();

  const refreshToken = allowsRefresh(client) ? mintSecret() : undefined;
  await withTenant(deps.pool, { role: deps.runtimeRole, tenantId }, async (db) => {
    if (refreshToken !== undefined) {
      await insertRefreshToken(db, {
        tokenHash: sha256Hex(refreshToken),
        tenantId,
        userId,
        clientId: client.clientId,
        familyId,
        scopes,
        resource,
        ttlSeconds: REFRESH_TOKEN_TTL_SECONDS,
      });
    }
    await touchClient(db, client.clientId);
  });
  return { tenantId, userId, clientId: client.clientId, scopes, resource, ...(refreshToken !== undefined ? { refreshToken } : {}) };
}

/** Rotates a refresh token: the presented one is spent, a successor in the same family is issued. */
export async function refreshGrant(
  deps: OAuthDeps,
  input: { refreshToken: string; clientId: string; clientSecret?: string; scopes: string[] },
): Promise<Grant> {
  const client = await authenticateClient(deps, input.clientId, input.clientSecret);
  if (!allowsRefresh(client)) throw invalidGrant();
  if (input.refreshToken.length === 0 || input.refreshToken.length > MAX_PRESENTED_LENGTH) throw invalidGrant();
  const asked = [...new Set(input.scopes)];
  if (asked.some((s) => !GRANTABLE.has(s))) throw new AppError("invalid_input", "invalid_scope: unknown scope", { field: "scope" });
  const refreshToken = mintSecret();
  const rotated = await write(deps, (db) =>
    rotateRefreshToken(db, {
      tokenHash: sha256Hex(input.refreshToken),
      clientId: client.clientId,
      newHash: sha256Hex(refreshToken),
      ttlSeconds: REFRESH_TOKEN_TTL_SECONDS,
      scopes: asked.length > 0 ? asked : null,
    }),
  );
  if (rotated.outcome === "invalid_scope") throw new AppError("invalid_input", "invalid_scope: more than the grant allows", { field: "scope" });
  if (rotated.outcome !== "rotated" || rotated.tenantId === null || rotated.userId === null || rotated.scopes === null || rotated.resource === null) {
    throw invalidGrant();
  }
  return { tenantId: rotated.tenantId, userId: rotated.userId, clientId: client.clientId, scopes: rotated.scopes, resource: rotated.resource, refreshToken };
}

/** RFC 7009: revokes the refresh token's whole family. Unknown tokens are ignored. */
export async function revokeToken(deps: OAuthDeps, input: { token: string; clientId: string; clientSecret?: string }): Promise<void> {
  const client = await authenticateClient(deps, input.clientId, input.clientSecret);
  if (input.token.length === 0 || input.token.length > MAX_PRESENTED_LENGTH) return;
  await write(deps, (db) => revokeRefreshToken(db, sha256Hex(input.token), client.clientId));
}

/** The keys access tokens are signed and verified with; the first call on an empty table creates one. */
export async function getSigningKeys(deps: OAuthDeps): Promise<SigningKeyRow[]> {
  return write(deps, async (db) => {
    const existing = await selectSigningKeys(db, SIGNING_KEY_RETENTION_SECONDS);
    if (existing.some((k) => k.active)) return existing;
    const kid = uuidv7();
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const common = { kid, alg: "EdDSA", use: "sig" };
    await insertSigningKeyIfNone(db, {
      kid,
      privateJwk: { ...privateKey.export({ format: "jwk" }), ...common },
      publicJwk: { ...publicKey.export({ format: "jwk" }), ...common },
    });
    return selectSigningKeys(db, SIGNING_KEY_RETENTION_SECONDS);
  });
}

export interface GarbageCollected {
  clients: number;
  codes: number;
  tokens: number;
  keys: number;
}

export async function collectGarbage(deps: OAuthDeps, clientIdleDays: number): Promise<GarbageCollected> {
  if (!Number.isInteger(clientIdleDays) || clientIdleDays < 1 || clientIdleDays > 3650) {
    throw new AppError("invalid_input", "client_idle_days: must be 1..3650", { field: "client_idle_days" });
  }
  const counts = await write(deps, (db) => collectOAuthGarbage(db, clientIdleDays, SIGNING_KEY_RETENTION_SECONDS));
  return { clients: Number(counts.clients), codes: Number(counts.codes), tokens: Number(counts.tokens), keys: Number(counts.keys) };
}
