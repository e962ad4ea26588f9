/**
 * An MCP host's OAuth client provider as both official SDKs (v2 and the legacy 1.x) drive it:
 * it keeps the registration, tokens and PKCE verifier in memory, and its "browser" opens the
 * consent page and approves it with an API key (test/support/oauth.ts). Both SDKs' provider
 * interfaces have this shape.
 */
import { REDIRECT_URI, approve } from "./oauth.js";

interface HostOptions {
  /** Identify the client by a Client ID Metadata Document URL instead of registering. */
  clientMetadataUrl?: string;
  /** Called with every secret the host is handed (tokens, codes), e.g. to check logs for them. */
  onSecret?: (secret: string) => void;
}

interface Tokens {
  access_token: string;
  token_type: string;
  refresh_token?: string;
  [key: string]: unknown;
}

interface ClientInformation {
  client_id: string;
  [key: string]: unknown;
}

export class ConsentingHost {
  information: ClientInformation | undefined;
  saved: Tokens | undefined;
  /** The query of the last redirect back to the client (code, state, iss, or an error). */
  callback: URLSearchParams | undefined;
  /** How many times the host was sent to the consent page. */
  redirects = 0;
  private verifier = "";

  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
    private readonly options: HostOptions = {},
  ) {}

  get clientMetadataUrl(): string | undefined {
    return this.options.clientMetadataUrl;
  }
  get redirectUrl(): string {
    return REDIRECT_URI;
  }
  get clientMetadata() {
    return {
      client_name: "SDK test host",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation(): ClientInformation | undefined {
    return this.information;
  }
  saveClientInformation(information: ClientInformation): void {
    this.information = information;
  }
  tokens(): Tokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: Tokens): void {
    this.saved = tokens;
    this.options.onSecret?.(tokens.access_token);
    if (tokens.refresh_token) this.options.onSecret?.(tokens.refresh_token);
  }
  async redirectToAuthorization(url: URL): Promise<void> {
    this.redirects += 1;
    this.callback = (await approve(this.baseUrl, url, this.apiKey)).searchParams;
    const code = this.callback.get("code");
    if (code) this.options.onSecret?.(code);
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
}
