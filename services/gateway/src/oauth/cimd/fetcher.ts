import type { ClientMetadataDocument } from "@3ngram/schema";

/**
 * Resolves a Client ID Metadata Document: an OAuth client whose client_id is an https URL is
 * described by the JSON document served at that URL. Fetching it is an SSRF boundary (the URL
 * comes from whoever starts an authorization), so implementations must validate the URL and every
 * redirect hop, refuse non-public addresses, connect to the validated address while verifying TLS
 * for the original host, and bound redirects, bytes, time, concurrency and cache size.
 * createClientMetadataFetcher (create-fetcher.ts) is the implementation; docs/oauth-cimd.md and
 * ADR-0014 describe its rules (redirects, for one, are refused unless configured, as the draft says).
 *
 * fetch() answers the validated document (its client_id equal to the URL asked for), or rejects
 * with AppError: `invalid_input` (details.field "client_id") when the URL, an address, the response
 * or the document is unacceptable; `unavailable` when the host could not be reached in time.
 */
export interface ClientMetadataFetcher {
  fetch(clientId: string): Promise<ClientMetadataDocument>;
}

/** Whether a client_id names a metadata document (an https URL with a path) rather than a registered client. */
export function isClientMetadataUrl(clientId: string): boolean {
  if (!URL.canParse(clientId)) return false;
  const url = new URL(clientId);
  return url.protocol === "https:" && url.pathname !== "/" && url.pathname !== "";
}
