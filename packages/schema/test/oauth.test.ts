import { describe, expect, it } from "vitest";
import { clientMetadataDocumentSchema, oauthClientMetadataSchema } from "../src/index.js";
import { isAcceptableRedirectUri, redirectUriMatches } from "../src/oauth.js";

describe("redirect URIs", () => {
  it.each([
    "https://app.example.com/callback",
    "http://127.0.0.1:33418/callback",
    "http://localhost:6274/oauth/callback",
    "http://[::1]:8080/cb",
    "com.example.app:/oauth2redirect",
  ])("accepts %s", (uri) => expect(isAcceptableRedirectUri(uri)).toBe(true));

  it.each([
    "http://app.example.com/callback", // plain http off loopback
    "https://app.example.com/cb#frag",
    "https://user:pw@app.example.com/cb",
    "javascript:alert(1)",
    "data:text/html,hi",
    "file:///etc/passwd",
    "not a url",
  ])("refuses %s", (uri) => expect(isAcceptableRedirectUri(uri)).toBe(false));
});

describe("redirect URI matching", () => {
  it.each([
    ["https://app.example.com/callback", "https://app.example.com/callback"],
    ["http://127.0.0.1/callback", "http://127.0.0.1:51234/callback"],
    ["http://127.0.0.1:7777/callback", "http://127.0.0.1:8888/callback"],
    ["http://[::1]:8080/cb?x=1", "http://[::1]:9090/cb?x=1"],
    ["http://localhost:6274/oauth/callback", "http://localhost:40000/oauth/callback"],
  ])("takes %s for %s", (registered, asked) => expect(redirectUriMatches(registered, asked)).toBe(true));

  it.each([
    ["https://app.example.com/callback", "https://app.example.com:8443/callback"], // only loopback ports vary
    ["https://app.example.com/callback", "https://app.example.com/callback/"],
    ["https://app.example.com/callback", "https://APP.example.com/callback"],
    ["http://127.0.0.1:7777/callback", "http://127.0.0.1:7777/callback/"],
    ["http://127.0.0.1:7777/callback", "http://127.0.0.1:7777/other"],
    ["http://127.0.0.1:7777/callback", "http://[::1]:7777/callback"], // another host
    ["http://127.0.0.1:7777/callback", "http://127.0.0.1:7777/callback?x=1"],
    ["http://127.0.0.1:7777/callback", "http://127.0.0.1:8888/callback#frag"],
    ["http://127.0.0.1:7777/callback", "http://user@127.0.0.1:8888/callback"],
    ["http://127.0.0.1:7777/callback", "https://127.0.0.1:8888/callback"],
    ["com.example.app:/oauth2redirect", "com.example.app:/other"],
  ])("refuses %s for %s", (registered, asked) => expect(redirectUriMatches(registered, asked)).toBe(false));
});

describe("client metadata", () => {
  it("fills the public-client defaults and drops unknown members", () => {
    const parsed = oauthClientMetadataSchema.parse({ redirect_uris: ["http://127.0.0.1:9/cb"], jwks: { keys: [] } });
    expect(parsed).toEqual({
      redirect_uris: ["http://127.0.0.1:9/cb"],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    });
  });

  it("narrows grant and response types to the supported ones and refuses a list left empty", () => {
    const parsed = oauthClientMetadataSchema.parse({
      redirect_uris: ["http://127.0.0.1:9/cb"],
      grant_types: ["urn:ietf:params:oauth:grant-type:jwt-bearer", "refresh_token", "authorization_code", "refresh_token"],
      response_types: ["code", "token"],
    });
    expect(parsed.grant_types).toEqual(["refresh_token", "authorization_code"]);
    expect(parsed.response_types).toEqual(["code"]);
    const none = oauthClientMetadataSchema.safeParse({ redirect_uris: ["http://127.0.0.1:9/cb"], grant_types: ["client_credentials"] });
    expect(none.success).toBe(false);
    expect(none.error?.issues[0]?.path).toEqual(["grant_types"]);
    expect(oauthClientMetadataSchema.safeParse({ redirect_uris: ["http://127.0.0.1:9/cb"], grant_types: "authorization_code" }).success).toBe(false);
  });

  it("names the offending field", () => {
    const result = oauthClientMetadataSchema.safeParse({ redirect_uris: ["http://evil.example/cb"] });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(["redirect_uris", 0]);
  });

  it("a metadata document describes a public client with an https client_id", () => {
    expect(clientMetadataDocumentSchema.safeParse({ client_id: "https://c.example/meta.json", redirect_uris: ["https://c.example/cb"] }).success).toBe(true);
    expect(clientMetadataDocumentSchema.safeParse({ client_id: "http://c.example/meta.json", redirect_uris: ["https://c.example/cb"] }).success).toBe(false);
    expect(
      clientMetadataDocumentSchema.safeParse({
        client_id: "https://c.example/m.json",
        redirect_uris: ["https://c.example/cb"],
        token_endpoint_auth_method: "client_secret_basic",
      }).success,
    ).toBe(false);
  });
});
