/**
 * Where this server says it lives. With PUBLIC_URL set, the issuer is that URL (no trailing
 * slash); without it (local and standalone runs) the issuer is the URL the gateway is listening
 * on, known only once it is bound, hence a getter. Tokens minted under one issuer do not verify
 * under another, so a deployment reached from outside must set PUBLIC_URL.
 */
export interface OAuthLocation {
  /** The authorization server's issuer identifier (RFC 8414), e.g. https://memory.example.com. */
  issuer(): string;
  /** The protected resource tokens are minted for (RFC 8707): `${issuer}/mcp`. */
  mcpResource(): string;
  /** RFC 9728 metadata for the MCP resource, advertised in WWW-Authenticate. */
  resourceMetadataUrl(): string;
}

export function oauthLocation(baseUrl: () => string): OAuthLocation {
  const issuer = () => baseUrl().replace(/\/+$/, "");
  return {
    issuer,
    mcpResource: () => `${issuer()}/mcp`,
    resourceMetadataUrl: () => `${issuer()}/.well-known/oauth-protected-resource/mcp`,
  };
}
