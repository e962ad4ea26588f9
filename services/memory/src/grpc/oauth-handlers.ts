import { OAuthStorageService } from "@3ngram/proto/memory/v1";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { memoryContracts } from "@3ngram/schema";
import type { OAuthClientRow } from "../db/oauth.js";
import type { MemoryDeps } from "../domain/deps.js";
import * as oauth from "../domain/oauth.js";
import { actorOf } from "./actor.js";

/** The stored client as its record: metadata as JSON text, never the secret's hash. */
function clientRecord(row: OAuthClientRow) {
  const { clientSecretHash: _hash, metadata, ...client } = row;
  return { ...client, metadataJson: JSON.stringify(metadata) };
}

export function oauthHandlers(deps: MemoryDeps): Handlers<typeof OAuthStorageService> {
  return bridgeHandlers(OAuthStorageService, memoryContracts.oauth, {
    async registerOAuthClient({ metadataJson }) {
      const { client, clientSecret } = await oauth.registerClient(deps, metadataJson);
      return { client: clientRecord(client), clientSecret };
    },
    saveMetadataDocumentClient: async ({ clientId, metadataJson }) => ({
      client: clientRecord(await oauth.saveMetadataDocumentClient(deps, clientId, metadataJson)),
    }),
    getOAuthClient: async ({ clientId }) => ({ client: clientRecord(await oauth.getClient(deps, clientId)) }),
    createAuthorizationCode: async (input, ctx) => oauth.createAuthorizationCode(deps, actorOf(ctx), input),
    redeemAuthorizationCode: async (input) => ({ grant: await oauth.redeemAuthorizationCode(deps, input) }),
    refreshOAuthGrant: async (input) => ({ grant: await oauth.refreshGrant(deps, input) }),
    async revokeOAuthToken(input) {
      await oauth.revokeToken(deps, input);
      return {};
    },
    async getSigningKeys() {
      const keys = await oauth.getSigningKeys(deps);
      return {
        keys: keys.map(({ kid, alg, publicJwk, privateJwk, active }) => ({
          kid,
          alg,
          publicJwkJson: JSON.stringify(publicJwk),
          // Only the active key's private half leaves the service.
          privateJwkJson: active ? JSON.stringify(privateJwk) : undefined,
          active,
        })),
      };
    },
    async collectOAuthGarbage({ clientIdleDays = oauth.DEFAULT_CLIENT_IDLE_DAYS }) {
      const counts = await oauth.collectGarbage(deps, clientIdleDays);
      return { clientsRemoved: counts.clients, codesRemoved: counts.codes, tokensRemoved: counts.tokens, keysRemoved: counts.keys };
    },
  });
}

export const oauthPolicies = {
  registerOAuthClient: { anyScope: [SCOPES.internalAuth], tenant: false },
  saveMetadataDocumentClient: { anyScope: [SCOPES.internalAuth], tenant: false },
  getOAuthClient: { anyScope: [SCOPES.internalAuth], tenant: false },
  createAuthorizationCode: { anyScope: [SCOPES.internalAuth], tenant: true },
  redeemAuthorizationCode: { anyScope: [SCOPES.internalAuth], tenant: false },
  refreshOAuthGrant: { anyScope: [SCOPES.internalAuth], tenant: false },
  revokeOAuthToken: { anyScope: [SCOPES.internalAuth], tenant: false },
  getSigningKeys: { anyScope: [SCOPES.internalAuth], tenant: false },
  collectOAuthGarbage: { anyScope: [SCOPES.internalConsolidate], tenant: false },
} satisfies Policies<typeof OAuthStorageService>;
