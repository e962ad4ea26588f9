import type { MemoryService } from "@3ngram/proto/memory/v1";
import { SCOPES, type Handlers, type Policies } from "@3ngram/rpc";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { OAuthClientRow } from "../db/oauth.js";
import type { MemoryDeps } from "../domain/deps.js";
import {
  DEFAULT_CLIENT_IDLE_DAYS,
  collectGarbage,
  createAuthorizationCode,
  getClient,
  getSigningKeys,
  redeemAuthorizationCode,
  refreshGrant,
  registerClient,
  revokeToken,
  saveMetadataDocumentClient,
  type Grant,
} from "../domain/oauth.js";
import { actorOf } from "./mappers.js";

type OAuthMethods =
  | "registerOAuthClient"
  | "saveMetadataDocumentClient"
  | "getOAuthClient"
  | "createAuthorizationCode"
  | "redeemAuthorizationCode"
  | "refreshOAuthGrant"
  | "revokeOAuthToken"
  | "getSigningKeys"
  | "collectOAuthGarbage";

function toProtoClient(row: OAuthClientRow) {
  return {
    clientId: row.clientId,
    registration: row.registration,
    tokenEndpointAuthMethod: row.tokenEndpointAuthMethod,
    metadataJson: JSON.stringify(row.metadata),
    createdAt: timestampFromDate(row.createdAt),
  };
}

function toProtoGrant(grant: Grant) {
  return {
    tenantId: grant.tenantId,
    userId: grant.userId,
    clientId: grant.clientId,
    scopes: grant.scopes,
    resource: grant.resource,
    ...(grant.refreshToken !== undefined ? { refreshToken: grant.refreshToken } : {}),
  };
}

export function oauthHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, OAuthMethods> {
  return {
    async registerOAuthClient(request) {
      const { client, clientSecret } = await registerClient(deps, request.metadataJson);
      return { client: toProtoClient(client), ...(clientSecret !== undefined ? { clientSecret } : {}) };
    },
    async saveMetadataDocumentClient(request) {
      return { client: toProtoClient(await saveMetadataDocumentClient(deps, request.clientId, request.metadataJson)) };
    },
    async getOAuthClient(request) {
      return { client: toProtoClient(await getClient(deps, request.clientId)) };
    },
    async createAuthorizationCode(request, ctx) {
      const { code, expiresAt } = await createAuthorizationCode(deps, actorOf(ctx), {
        clientId: request.clientId,
        redirectUri: request.redirectUri,
        codeChallenge: request.codeChallenge,
        scopes: request.scopes,
        resource: request.resource,
      });
      return { code, expiresAt: timestampFromDate(expiresAt) };
    },
    async redeemAuthorizationCode(request) {
      const grant = await redeemAuthorizationCode(deps, {
        code: request.code,
        clientId: request.clientId,
        ...(request.clientSecret !== undefined ? { clientSecret: request.clientSecret } : {}),
        redirectUri: request.redirectUri,
        codeVerifier: request.codeVerifier,
      });
      return { grant: toProtoGrant(grant) };
    },
    async refreshOAuthGrant(request) {
      const grant = await refreshGrant(deps, {
        refreshToken: request.refreshToken,
        clientId: request.clientId,
        ...(request.clientSecret !== undefined ? { clientSecret: request.clientSecret } : {}),
        scopes: request.scopes,
      });
      return { grant: toProtoGrant(grant) };
    },
    async revokeOAuthToken(request) {
      await revokeToken(deps, {
        token: request.token,
        clientId: request.clientId,
        ...(request.clientSecret !== undefined ? { clientSecret: request.clientSecret } : {}),
      });
      return {};
    },
    async getSigningKeys() {
      const keys = await getSigningKeys(deps);
      return {
        keys: keys.map((k) => ({
          kid: k.kid,
          alg: k.alg,
          publicJwkJson: JSON.stringify(k.publicJwk),
          ...(k.active ? { privateJwkJson: JSON.stringify(k.privateJwk) } : {}),
          active: k.active,
        })),
      };
    },
    async collectOAuthGarbage(request) {
      const counts = await collectGarbage(deps, request.clientIdleDays === 0 ? DEFAULT_CLIENT_IDLE_DAYS : request.clientIdleDays);
      return {
        clientsRemoved: BigInt(counts.clients),
        codesRemoved: BigInt(counts.codes),
        tokensRemoved: BigInt(counts.tokens),
        keysRemoved: BigInt(counts.keys),
      };
    },
  };
}

export const oauthPolicies: Pick<Policies<typeof MemoryService>, OAuthMethods> = {
  registerOAuthClient: { anyScope: [SCOPES.internalAuth], tenant: false },
  saveMetadataDocumentClient: { anyScope: [SCOPES.internalAuth], tenant: false },
  getOAuthClient: { anyScope: [SCOPES.internalAuth], tenant: false },
  createAuthorizationCode: { anyScope: [SCOPES.internalAuth], tenant: true },
  redeemAuthorizationCode: { anyScope: [SCOPES.internalAuth], tenant: false },
  refreshOAuthGrant: { anyScope: [SCOPES.internalAuth], tenant: false },
  revokeOAuthToken: { anyScope: [SCOPES.internalAuth], tenant: false },
  getSigningKeys: { anyScope: [SCOPES.internalAuth], tenant: false },
  collectOAuthGarbage: { anyScope: [SCOPES.internalConsolidate], tenant: false },
};
