/**
 * The OAuth 2.1 authorization server and resource server end to end: the real gateway over HTTP,
 * the real memory service over gRPC, PostgreSQL. The official MCP client SDK runs the whole
 * discovery → registration → authorization → token → tool call flow; the protocol's edges
 * (PKCE, redirect_uri, code reuse, rotation, forged tokens) are driven over plain HTTP.
 */
import { generateKeyPairSync } from "node:crypto";
import { AppError } from "@3ngram/errors";
import { createTenantWithKey } from "@3ngram/memory";
import { SCOPES } from "@3ngram/rpc";
import { createLogger } from "@3ngram/runtime";
import { clientMetadataDocumentSchema, type ClientMetadataDocument } from "@3ngram/schema";
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { SignJWT, importJWK, type JWK } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import type { ClientMetadataFetcher } from "../../src/oauth/cimd/fetcher.js";
import { startGateway, type RunningGateway } from "../../src/gateway.js";
import { testConfig } from "../support/gateway.js";
import { callTool, errorText } from "../support/mcp-client.js";
import {
  REDIRECT_URI,
  approve,
  authorizeUrl,
  obtainCode,
  obtainTokens,
  openConsent,
  pkcePair,
  redeemForm,
  registerClient,
  registerPublicClient,
  submitConsent,
  tokenRequest,
} from "../../../../test/support/oauth.js";
import { capturedLog } from "../support/captured-log.js";
import { ConsentingHost } from "../../../../test/support/consenting-host.js";

type Tenant = { tenantId: string; userId: string; apiKey: string };

/** The ClientMetadataFetcher contract served from a Map (the composition boundary's test double). */
class MapMetadataFetcher implements ClientMetadataFetcher {
  readonly documents = new Map<string, unknown>();
  async fetch(clientId: string): Promise<ClientMetadataDocument> {
    const document = this.documents.get(clientId);
    if (document === undefined) throw new AppError("invalid_input", "client_id: no metadata document at this URL", { field: "client_id" });
    return clientMetadataDocumentSchema.parse(document);
  }
}

const { log: gatewayLog, lines: logLines } = capturedLog();

let core: CoreServices;
let gateway: RunningGateway;
let base: string;
let tenantA: Tenant;
let tenantB: Tenant;
let readOnly: Tenant;
const fetcher = new MapMetadataFetcher();
/** Every secret the tests see, checked against the captured logs at the end. */
const secretsSeen = new Set<string>();

beforeAll(async () => {
  core = await startCoreServices({ label: "oauth" });
  tenantA = await core.createTenant("oauth tenant a");
  tenantB = await core.createTenant("oauth tenant b");
  readOnly = await createTenantWithKey(core.ownerPool, { tenantName: "oauth read-only", scopes: [SCOPES.read] });
  const peers = { memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk };
  gateway = await startGateway(testConfig(peers), {
    log: gatewayLog,
    clientMetadataFetcher: fetcher,
  });
  base = gateway.url;
  for (const t of [tenantA, tenantB, readOnly]) secretsSeen.add(t.apiKey);
});

afterAll(async () => {
  await gateway?.close();
  await core?.close();
});

function remember(topic: string) {
  return { memoryType: "note", topic, content: `OAuth test memory about ${topic} ${Math.random()}` };
}

async function restGet(path: string, token: string): Promise<Response> {
  return fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${token}` } });
}

async function mcpStatus(token: string): Promise<Response> {
  return fetch(`${base}/mcp`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
}

async function connectWithToken(token: string): Promise<Client> {
  const client = new Client({ name: "oauth-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

/** An MCP host whose every token and code is remembered, to check the logs for them. */
function host(apiKey: string, options: { clientMetadataUrl?: string } = {}): ConsentingHost {
  return new ConsentingHost(base, apiKey, { ...options, onSecret: (secret) => secretsSeen.add(secret) });
}

/** The SDK's whole flow: 401 → discovery → registration (or CIMD) → consent → token → connected client. */
async function connectThroughOAuth(provider: ConsentingHost): Promise<Client> {
  const mcpUrl = new URL(`${base}/mcp`);
  const first = new Client({ name: "oauth-sdk", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.callback?.get("code")).toBeTruthy();
  await transport.finishAuth(provider.callback!);
  const client = new Client({ name: "oauth-sdk", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  return client;
}

describe("discovery", () => {
  it("publishes RFC 8414 authorization-server metadata with the issuer derived from the listening URL", async () => {
    const res = await fetch(`${base}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
    const metadata = (await res.json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      code_challenge_methods_supported: ["S256"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      response_types_supported: ["code"],
      scopes_supported: ["memory:read", "memory:write", "memory:erase"],
      client_id_metadata_document_supported: true,
    });
  });

  it("publishes RFC 9728 metadata for the MCP resource and the server root", async () => {
    const mcp = (await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, unknown>;
    expect(mcp).toMatchObject({ resource: `${base}/mcp`, authorization_servers: [base] });
    const root = (await (await fetch(`${base}/.well-known/oauth-protected-resource`)).json()) as Record<string, unknown>;
    expect(root).toMatchObject({ resource: base, authorization_servers: [base] });
  });

  it("answers /mcp without credentials with a challenge naming the resource metadata", async () => {
    const res = await fetch(`${base}/mcp`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(`Bearer realm="3ngram", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
  });

  it("publishes only public signing keys", async () => {
    const jwks = (await (await fetch(`${base}/.well-known/jwks.json`)).json()) as { keys: JWK[] };
    expect(jwks.keys.length).toBeGreaterThan(0);
    for (const key of jwks.keys) {
      expect(key).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
      expect(key.d).toBeUndefined();
    }
  });
});

describe("the official MCP client's OAuth flow", () => {
  it("discovers, registers, is authorized with an API key, and calls tools with the access token", async () => {
    const provider = host(tenantA.apiKey);
    const client = await connectThroughOAuth(provider);
    const stored = await callTool(client, "remember", remember("sdk flow"));
    expect(stored.isError).toBeFalsy();
    const id = (stored.structuredContent as { memory: { id: string } }).memory.id;
    const read = await callTool(client, "get_memories", { ids: [id] });
    expect((read.structuredContent as { memories: Array<{ id: string }> }).memories.map((m) => m.id)).toEqual([id]);
    await client.close();

    // The same access token works on REST, as the same tenant.
    const token = provider.tokens()!.access_token;
    const rest = await restGet(`/api/v1/memories/${id}`, token);
    expect(rest.status).toBe(200);
    expect(provider.tokens()!.refresh_token).toBeTruthy();
  });

  it("authorizes a Client ID Metadata Document client through the injected fetcher", async () => {
    const clientId = "https://host.example/oauth/client.json";
    fetcher.documents.set(clientId, { client_id: clientId, client_name: "Metadata host", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none" });
    const provider = host(tenantA.apiKey, { clientMetadataUrl: clientId });
    const client = await connectThroughOAuth(provider);
    expect((await callTool(client, "remember", remember("cimd"))).isError).toBeFalsy();
    await client.close();
    const row = await core.ownerPool.query("SELECT registration FROM oauth_clients WHERE client_id = $1", [clientId]);
    expect(row.rows).toEqual([{ registration: "metadata_document" }]);
  });

  it("refuses an https client_id whose document the fetcher rejects, on the page", async () => {
    const { challenge } = pkcePair();
    const page = await openConsent(
      authorizeUrl(base, {
        response_type: "code",
        client_id: "https://unknown.example/client.json",
        redirect_uri: REDIRECT_URI,
        code_challenge: challenge,
        code_challenge_method: "S256",
      }),
    );
    expect(page.status).toBe(400);
    expect(page.headers.get("location")).toBeNull();
    expect(page.html).toContain("metadata document is not acceptable");
  });

  it("a gateway started without a test fetcher resolves https client_ids through the SSRF-safe one", async () => {
    const peers = { memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk };
    const bare = await startGateway(testConfig(peers), { log: createLogger({ service: "gateway", level: "silent" }) });
    try {
      const { challenge } = pkcePair();
      const page = await openConsent(
        // localhost answers from this machine: the default fetcher must refuse it before connecting.
        authorizeUrl(bare.url, {
          response_type: "code",
          client_id: "https://localhost/oauth/client.json",
          redirect_uri: REDIRECT_URI,
          code_challenge: challenge,
          code_challenge_method: "S256",
        }),
      );
      expect(page.status).toBe(400);
      expect(page.html).toContain("has no public address");
    } finally {
      await bare.close();
    }
  });
});

describe("dynamic client registration", () => {
  it("registers a public client and echoes its metadata", async () => {
    const answer = await registerClient(base, { client_name: "dcr", redirect_uris: [REDIRECT_URI] });
    expect(answer.status).toBe(201);
    expect(answer.headers.get("cache-control")).toBe("no-store");
    expect(answer.body).toMatchObject({ client_name: "dcr", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none" });
    expect(answer.body.client_secret).toBeUndefined();
  });

  it("answers bad metadata with 400 invalid_client_metadata naming the field", async () => {
    const answer = await registerClient(base, { redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "private_key_jwt" });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe("invalid_client_metadata");
    expect(answer.body.error_description).toMatch(/^token_endpoint_auth_method: /);
  });

  it("answers a bad redirect URI with invalid_redirect_uri naming it", async () => {
    const answer = await registerClient(base, { redirect_uris: ["http://evil.example/cb"] });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: "invalid_redirect_uri" });
    expect(answer.body.error_description).toMatch(/^redirect_uris\.0: /);
  });

  it("answers a malformed body in RFC 7591 form", async () => {
    const res = await fetch(`${base}/oauth/register`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "{not json" });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_client_metadata" });
  });

  it("gives a confidential client a secret it must present (basic or post)", async () => {
    const answer = await registerClient(base, { redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "client_secret_basic" });
    expect(answer.status).toBe(201);
    const clientId = answer.body.client_id as string;
    const secret = answer.body.client_secret as string;
    secretsSeen.add(secret);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const issued = await obtainCode(base, tenantA.apiKey, { clientId });
    const { client_id: _omit, ...form } = redeemForm(issued);
    const wrong = await tokenRequest(base, form, { Authorization: `Basic ${Buffer.from(`${clientId}:nope`).toString("base64")}` });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe("invalid_client");
    const withoutSecret = await tokenRequest(base, redeemForm(issued));
    expect(withoutSecret.body.error).toBe("invalid_client");
    const right = await tokenRequest(base, form, { Authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString("base64")}` });
    expect(right.status).toBe(200);
    secretsSeen.add(right.body.access_token as string);

    const again = await obtainCode(base, tenantA.apiKey, { clientId });
    const post = await tokenRequest(base, { ...redeemForm(again), client_secret: secret });
    expect(post.status).toBe(200);
  });
});

describe("the authorization endpoint", () => {
  async function freshRequest(overrides: Record<string, string | undefined> = {}) {
    const clientId = await registerPublicClient(base);
    const { challenge, verifier } = pkcePair();
    const params = {
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "xyz",
      ...overrides,
    };
    return { clientId, verifier, url: authorizeUrl(base, params) };
  }

  /** A request refused on the page (400, no redirect), and the link back to the client it offers. */
  async function refusedWithLinkBack(overrides: Record<string, string | undefined>): Promise<URL> {
    const { url } = await freshRequest(overrides);
    const res = await fetch(url, { redirect: "manual" });
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    const href = /<a href="([^"]+)">Return to the application<\/a>/.exec(await res.text())?.[1];
    expect(href).toBeDefined();
    return new URL(href!.replace(/&#(\d+);/g, (_m, code: string) => String.fromCharCode(Number(code))));
  }

  it("renders a framing-proof, script-free consent page with a CSRF token", async () => {
    const { url } = await freshRequest();
    const page = await openConsent(url);
    expect(page.status).toBe(200);
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(page.html).not.toMatch(/<script|\sstyle=|\son[a-z]+=/i);
    expect(page.hidden.csrf_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(page.cookie).toBe(`oauth_csrf=${page.hidden.csrf_token}`);
  });

  it("echoes state and the issuer with the code", async () => {
    const { url } = await freshRequest();
    const redirect = await approve(base, url, tenantA.apiKey);
    expect(`${redirect.origin}${redirect.pathname}`).toBe(REDIRECT_URI);
    expect(redirect.searchParams.get("state")).toBe("xyz");
    expect(redirect.searchParams.get("iss")).toBe(base);
    expect(redirect.searchParams.get("code")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    secretsSeen.add(redirect.searchParams.get("code")!);
  });

  it("takes a loopback redirect_uri on any port, and binds the code to the port asked for", async () => {
    const elsewhere = "http://127.0.0.1:8888/callback";
    const { url, clientId, verifier } = await freshRequest({ redirect_uri: elsewhere });
    const redirect = await approve(base, url, tenantA.apiKey);
    expect(`${redirect.origin}${redirect.pathname}`).toBe(elsewhere);
    const code = redirect.searchParams.get("code")!;
    secretsSeen.add(code);
    const form = { grant_type: "authorization_code", code, client_id: clientId, code_verifier: verifier };
    expect((await tokenRequest(base, { ...form, redirect_uri: REDIRECT_URI })).body.error).toBe("invalid_grant");
    const second = await approve(base, url, tenantA.apiKey);
    const answer = await tokenRequest(base, { ...form, code: second.searchParams.get("code")!, redirect_uri: elsewhere });
    expect(answer.status).toBe(200);
    secretsSeen.add(answer.body.access_token as string);
    secretsSeen.add(answer.body.refresh_token as string);
  });

  it("refuses the plain PKCE method and a missing challenge on a page, with a link that tells the client", async () => {
    for (const overrides of [{ code_challenge_method: "plain" }, { code_challenge: undefined }, { code_challenge_method: undefined }]) {
      const back = await refusedWithLinkBack(overrides);
      expect(back.searchParams.get("error")).toBe("invalid_request");
      expect(back.searchParams.get("state")).toBe("xyz");
      expect(back.searchParams.get("iss")).toBe(base);
    }
  });

  it("never sends the browser to a registered redirect URI before the user has seen the request (no open redirector)", async () => {
    // Anyone can register a client with any https redirect URI, so a request that fails at once
    // (here: no response_type) must not become a redirect there.
    const clientId = await registerPublicClient(base, { redirect_uris: ["https://attacker.example/landing"] });
    const res = await fetch(authorizeUrl(base, { client_id: clientId, redirect_uri: "https://attacker.example/landing" }), { redirect: "manual" });
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
  });

  it("shows an unregistered redirect_uri and an unknown client on the page, never redirecting", async () => {
    for (const overrides of [
      { redirect_uri: "http://127.0.0.1:7777/other" },
      { redirect_uri: `${REDIRECT_URI}/` },
      { client_id: "00000000-0000-4000-8000-000000000000" },
    ]) {
      const { url } = await freshRequest(overrides);
      const res = await fetch(url, { redirect: "manual" });
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
    }
  });

  it("requires the resource to be this server's MCP endpoint", async () => {
    expect((await refusedWithLinkBack({ resource: "https://other.example/mcp" })).searchParams.get("error")).toBe("invalid_target");
  });

  it("refuses a submission without the page's CSRF cookie, and a wrong API key", async () => {
    const { url } = await freshRequest();
    const page = await openConsent(url);
    const forged = await submitConsent(base, { ...page, cookie: "oauth_csrf=forged" }, { api_key: tenantA.apiKey, decision: "allow" });
    expect(forged.status).toBe(403);
    expect(forged.headers.get("location")).toBeNull();
    const wrongKey = await submitConsent(base, page, { api_key: "3ng_AAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB", decision: "allow" });
    expect(wrongKey.status).toBe(401);
    expect(await wrongKey.text()).toContain("That API key was not accepted.");
  });

  it("sends access_denied when the user denies", async () => {
    const { url } = await freshRequest();
    const page = await openConsent(url);
    const res = await submitConsent(base, page, { decision: "deny" });
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get("location")!).searchParams.get("error")).toBe("access_denied");
  });

  it("never grants more than the API key holds", async () => {
    const tokens = await obtainTokens(base, readOnly.apiKey);
    expect(tokens.scope).toBe("memory:read");
  });
});

describe("the token endpoint", () => {
  it("refuses a wrong PKCE verifier, and the code is spent afterwards", async () => {
    const issued = await obtainCode(base, tenantA.apiKey);
    const wrong = await tokenRequest(base, { ...redeemForm(issued), code_verifier: pkcePair().verifier });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_grant");
    expect(wrong.headers.get("cache-control")).toBe("no-store");
    const right = await tokenRequest(base, redeemForm(issued));
    expect(right.body.error).toBe("invalid_grant");
  });

  it("refuses a redirect_uri other than the one authorized", async () => {
    const issued = await obtainCode(base, tenantA.apiKey);
    const answer = await tokenRequest(base, { ...redeemForm(issued), redirect_uri: "http://127.0.0.1:7777/elsewhere" });
    expect(answer.body.error).toBe("invalid_grant");
  });

  it("refuses a code issued to another client", async () => {
    const issued = await obtainCode(base, tenantA.apiKey);
    const other = await registerPublicClient(base);
    const answer = await tokenRequest(base, { ...redeemForm(issued), client_id: other });
    expect(answer.body.error).toBe("invalid_grant");
  });

  it("a reused code fails and revokes what the first redemption issued", async () => {
    const issued = await obtainCode(base, tenantA.apiKey);
    const first = await tokenRequest(base, redeemForm(issued));
    expect(first.status).toBe(200);
    const refreshToken = first.body.refresh_token as string;
    secretsSeen.add(refreshToken);
    const second = await tokenRequest(base, redeemForm(issued));
    expect(second.status).toBe(400);
    expect(second.body.error).toBe("invalid_grant");
    const refreshed = await tokenRequest(base, { grant_type: "refresh_token", refresh_token: refreshToken, client_id: issued.clientId });
    expect(refreshed.body.error).toBe("invalid_grant");
  });

  it("of concurrent redemptions of one code, exactly one wins", async () => {
    const issued = await obtainCode(base, tenantA.apiKey);
    const answers = await Promise.all(Array.from({ length: 6 }, () => tokenRequest(base, redeemForm(issued))));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.body.error === "invalid_grant")).toHaveLength(5);
  });

  it("rotates refresh tokens; presenting a rotated one revokes the family", async () => {
    const tokens = await obtainTokens(base, tenantA.apiKey);
    secretsSeen.add(tokens.refreshToken);
    const rotated = await tokenRequest(base, { grant_type: "refresh_token", refresh_token: tokens.refreshToken, client_id: tokens.clientId });
    expect(rotated.status).toBe(200);
    const next = rotated.body.refresh_token as string;
    secretsSeen.add(next);
    expect(next).not.toBe(tokens.refreshToken);
    expect((await mcpStatus(rotated.body.access_token as string)).status).toBe(200);

    const replay = await tokenRequest(base, { grant_type: "refresh_token", refresh_token: tokens.refreshToken, client_id: tokens.clientId });
    expect(replay.body.error).toBe("invalid_grant");
    const successor = await tokenRequest(base, { grant_type: "refresh_token", refresh_token: next, client_id: tokens.clientId });
    expect(successor.body.error).toBe("invalid_grant");
  });

  it("lets a refresh narrow the access token's scopes, never the grant's, and never widen them", async () => {
    const tokens = await obtainTokens(base, tenantA.apiKey);
    const narrowed = await tokenRequest(base, {
      grant_type: "refresh_token",
      refresh_token: tokens.refreshToken,
      client_id: tokens.clientId,
      scope: "memory:read",
    });
    expect(narrowed.body.scope).toBe("memory:read");
    // The refresh token it was answered with still carries the whole grant (RFC 6749 §6).
    const restored = await tokenRequest(base, {
      grant_type: "refresh_token",
      refresh_token: narrowed.body.refresh_token as string,
      client_id: tokens.clientId,
      scope: "memory:read memory:write",
    });
    expect(restored.status).toBe(200);
    expect((restored.body.scope as string).split(" ").sort()).toEqual(["memory:read", "memory:write"]);
    const widened = await tokenRequest(base, {
      grant_type: "refresh_token",
      refresh_token: restored.body.refresh_token as string,
      client_id: tokens.clientId,
      scope: "memory:read memory:write memory:erase",
    });
    expect(widened.body.error).toBe("invalid_scope");
  });

  it("revocation (RFC 7009) ends the refresh family", async () => {
    const tokens = await obtainTokens(base, tenantA.apiKey);
    const res = await fetch(`${base}/oauth/revoke`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: tokens.refreshToken, client_id: tokens.clientId }),
    });
    expect(res.status).toBe(200);
    const after = await tokenRequest(base, { grant_type: "refresh_token", refresh_token: tokens.refreshToken, client_id: tokens.clientId });
    expect(after.body.error).toBe("invalid_grant");
  });

  it("answers unknown grant types and missing parameters in RFC 6749 form", async () => {
    const clientId = await registerPublicClient(base);
    expect((await tokenRequest(base, { grant_type: "password", client_id: clientId })).body.error).toBe("unsupported_grant_type");
    // The grant types are a lookup table: names every object has are not grant types either.
    for (const inherited of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      const answer = await tokenRequest(base, { grant_type: inherited, client_id: clientId });
      expect(answer.body, inherited).toMatchObject({
        error: "unsupported_grant_type",
        error_description: "grant_type must be authorization_code or refresh_token",
      });
    }
    expect((await tokenRequest(base, { grant_type: "authorization_code", client_id: clientId })).body.error).toBe("invalid_request");
    expect(
      (
        await tokenRequest(base, {
          grant_type: "authorization_code",
          code: "x",
          redirect_uri: REDIRECT_URI,
          code_verifier: pkcePair().verifier,
          client_id: "nobody",
        })
      ).body.error,
    ).toBe("invalid_client");
  });
});

describe("the resource server", () => {
  /** Signs claims with the server's own active key, read from the database (what an attacker must not have). */
  async function signWithServerKey(claims: Record<string, unknown>, header: Record<string, unknown> = {}): Promise<string> {
    await fetch(`${base}/.well-known/jwks.json`);
    const { rows } = await core.ownerPool.query<{ kid: string; private_jwk: JWK }>("SELECT kid, private_jwk FROM oauth_signing_keys WHERE retired_at IS NULL");
    const key = await importJWK(rows[0]!.private_jwk, "EdDSA");
    return new SignJWT(claims).setProtectedHeader({ alg: "EdDSA", typ: "at+jwt", kid: rows[0]!.kid, ...header }).sign(key);
  }

  function claims(overrides: Record<string, unknown> = {}) {
    const now = Math.floor(Date.now() / 1000);
    return {
      iss: base,
      aud: `${base}/mcp`,
      sub: tenantA.userId,
      tid: tenantA.tenantId,
      scope: "memory:read memory:write",
      client_id: "c",
      jti: crypto.randomUUID(),
      iat: now,
      exp: now + 600,
      ...overrides,
    };
  }

  it("accepts a well-formed token signed by the server (control)", async () => {
    expect((await mcpStatus(await signWithServerKey(claims()))).status).toBe(200);
  });

  it("answers expired, not-yet-valid, wrong-audience, wrong-issuer, forged and unsigned tokens with 401 on /mcp and /api/v1", async () => {
    const now = Math.floor(Date.now() / 1000);
    const { privateKey } = generateKeyPairSync("ed25519");
    const attackerKey = await importJWK({ ...(privateKey.export({ format: "jwk" }) as JWK) }, "EdDSA");
    const serverKid = (await core.ownerPool.query<{ kid: string }>("SELECT kid FROM oauth_signing_keys WHERE retired_at IS NULL")).rows[0]!.kid;
    const bad = [
      await signWithServerKey(claims({ exp: now - 120, iat: now - 4000 })),
      await signWithServerKey(claims({ nbf: now + 600 })),
      await signWithServerKey(claims({ aud: `${base}/other` })),
      await signWithServerKey(claims({ iss: "https://evil.example" })),
      await signWithServerKey(claims(), { typ: "JWT" }),
      await new SignJWT(claims()).setProtectedHeader({ alg: "EdDSA", typ: "at+jwt", kid: serverKid }).sign(attackerKey),
      `${Buffer.from(JSON.stringify({ alg: "none", typ: "at+jwt", kid: serverKid })).toString("base64url")}.${Buffer.from(JSON.stringify(claims())).toString("base64url")}.`,
      "not-a-token",
    ];
    for (const token of bad) {
      const mcp = await mcpStatus(token);
      expect(mcp.status).toBe(401);
      expect(mcp.headers.get("www-authenticate")).toContain('error="invalid_token"');
      expect(mcp.headers.get("www-authenticate")).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
      expect((await restGet("/api/v1/memories/facets", token)).status).toBe(401);
    }
  });

  it("a read-only token cannot remember: insufficient_scope on MCP, 403 with the scope on REST", async () => {
    const tokens = await obtainTokens(base, tenantA.apiKey, { scope: "memory:read" });
    const client = await connectWithToken(tokens.accessToken);
    expect(errorText(await callTool(client, "remember", remember("read only")))).toMatch(/^insufficient_scope/);
    await client.close();
    const res = await fetch(`${base}/api/v1/memories`, {
      method: "POST",
      headers: { Authorization: `Bearer ${tokens.accessToken}`, "Content-Type": "application/json" },
      body: JSON.stringify(remember("read only rest")),
    });
    expect(res.status).toBe(403);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="3ngram", error="insufficient_scope", scope="memory:write"');
  });

  it("a token of tenant A sees tenant B's memory ids as not found", async () => {
    const tokensB = await obtainTokens(base, tenantB.apiKey);
    const clientB = await connectWithToken(tokensB.accessToken);
    const stored = await callTool(clientB, "remember", remember("tenant b secret"));
    const idB = (stored.structuredContent as { memory: { id: string } }).memory.id;
    await clientB.close();

    const tokensA = await obtainTokens(base, tenantA.apiKey);
    const clientA = await connectWithToken(tokensA.accessToken);
    const read = await callTool(clientA, "get_memories", { ids: [idB] });
    expect(read.structuredContent).toMatchObject({ memories: [], notFound: [idB] });
    await clientA.close();
    expect((await restGet(`/api/v1/memories/${idB}`, tokensA.accessToken)).status).toBe(404);
  });

  it("a retired signing key keeps verifying on a replica that sees the rotation; new tokens use the new key", async () => {
    const old = await obtainTokens(base, tenantA.apiKey);
    const oldKid = (await core.ownerPool.query<{ kid: string }>("SELECT kid FROM oauth_signing_keys WHERE retired_at IS NULL")).rows[0]!.kid;
    await core.ownerPool.query("UPDATE oauth_signing_keys SET retired_at = now() WHERE retired_at IS NULL");
    const peers = { memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk };
    // A second replica under the same issuer, as behind a load balancer.
    const replica = await startGateway(testConfig(peers, { PUBLIC_URL: base }), { log: createLogger({ service: "gateway", level: "silent" }) });
    try {
      const viaReplica = await fetch(`${replica.url}/mcp`, {
        method: "POST",
        headers: { Authorization: `Bearer ${old.accessToken}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
      });
      expect(viaReplica.status).toBe(200);
      const jwks = (await (await fetch(`${replica.url}/.well-known/jwks.json`)).json()) as { keys: JWK[] };
      const kids = jwks.keys.map((k) => k.kid);
      expect(kids).toContain(oldKid);
      expect(kids).toHaveLength(2);
      const issued = await obtainCode(replica.url, tenantA.apiKey);
      const fresh = await tokenRequest(replica.url, redeemForm(issued));
      const header = JSON.parse(Buffer.from((fresh.body.access_token as string).split(".")[0]!, "base64url").toString()) as { kid: string };
      expect(header.kid).not.toBe(oldKid);
      expect(kids).toContain(header.kid);
    } finally {
      await replica.close();
    }
  });
});

describe("logs", () => {
  it("never contain an API key, code, access token, refresh token or client secret", () => {
    const text = logLines.join("\n");
    expect(text.length).toBeGreaterThan(0);
    expect(text).toContain("oauth tokens issued");
    expect(secretsSeen.size).toBeGreaterThan(8);
    for (const secret of secretsSeen) expect(text.includes(secret), "a secret appeared in the gateway logs").toBe(false);
  });
});
