/**
 * Who a client_id names. A UUID-like id is a client registered here (RFC 7591, stored by the
 * memory service). An https URL is a Client ID Metadata Document: the injected fetcher (the SSRF
 * boundary) retrieves and validates it, and the memory service records a row so the codes and
 * tokens it is issued can reference it; the fetched document stays authoritative.
 */
import { isAppError } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import { oauthClientMetadataSchema, type OAuthClientMetadata } from "@3ngram/schema";
import type { MemoryPeer } from "../clients/memory.js";
import { isClientMetadataUrl, type ClientMetadataFetcher } from "./cimd/fetcher.js";
import { OAuthError } from "./errors.js";

export interface KnownClient {
  clientId: string;
  registration: "dynamic" | "metadata_document";
  metadata: OAuthClientMetadata;
}

const MAX_CLIENT_ID_LENGTH = 2048;

export function createClientDirectory(memory: MemoryPeer, fetcher: ClientMetadataFetcher | undefined) {
  const identity = { scopes: [SCOPES.internalAuth] };
  return {
    /** The client, or an OAuthError describing why it is not acceptable (shown on the page, never redirected). */
    async resolve(clientId: string): Promise<KnownClient> {
      if (clientId.length === 0 || clientId.length > MAX_CLIENT_ID_LENGTH) throw new OAuthError("invalid_request", "client_id is missing or too long");
      if (isClientMetadataUrl(clientId)) {
        if (fetcher === undefined) throw new OAuthError("invalid_client", "this server does not accept Client ID Metadata Document clients");
        let document;
        try {
          document = await fetcher.fetch(clientId);
        } catch (err) {
          if (isAppError(err) && err.reason === "unavailable")
            throw new OAuthError("temporarily_unavailable", "the client's metadata document could not be fetched", 503);
          // The fetcher's refusals say what was wrong (host, status, member) and never quote the document.
          if (isAppError(err) && err.reason === "invalid_input")
            throw new OAuthError("invalid_client", `the client's metadata document is not acceptable (${err.message})`);
          throw new OAuthError("invalid_client", "the client's metadata document is not acceptable");
        }
        if (document.client_id !== clientId) throw new OAuthError("invalid_client", "the client's metadata document names another client_id");
        const { client_id: _url, ...metadata } = document;
        await memory.oauth.saveMetadataDocumentClient({ clientId, metadataJson: JSON.stringify(document) }, { identity });
        return { clientId, registration: "metadata_document", metadata };
      }
      try {
        const { client } = await memory.oauth.getOAuthClient({ clientId }, { identity });
        return {
          clientId: client.clientId,
          registration: client.registration,
          metadata: oauthClientMetadataSchema.parse(JSON.parse(client.metadataJson)),
        };
      } catch (err) {
        if (isAppError(err) && err.reason === "not_found") throw new OAuthError("invalid_client", "unknown client");
        throw err;
      }
    },
  };
}
export type ClientDirectory = ReturnType<typeof createClientDirectory>;
