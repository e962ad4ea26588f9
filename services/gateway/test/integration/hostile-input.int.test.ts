/**
 * One regression test per reproducer of issue 11, against the real gateway on the real memory and
 * search services: hostile input is answered 4xx (or an isError result) naming the field, nothing
 * is written, nothing is logged at error level, and the raw input never reaches a log line. Each
 * test failed before the change it covers (a 500, a -32603, a server_error redirect or a 403 on
 * the server's own origin).
 */
import { request } from "node:http";
import { gzipSync } from "node:zlib";
import { createTenantWithKey } from "@3ngram/memory";
import { SCOPES } from "@3ngram/rpc";
import { MAX_TOPIC_LENGTH, UNSTORABLE_TEXT_MESSAGE } from "@3ngram/schema";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Browser } from "../../../../test/support/browser.js";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { REDIRECT_URI, authorizeUrl, openConsent, pkcePair, registerPublicClient, submitConsent, tokenRequest } from "../../../../test/support/oauth.js";
import { createRowFingerprint } from "../../../../test/support/row-fingerprint.js";
import { startGateway, type RunningGateway } from "../../src/gateway.js";
import { SERVER_CAPABILITIES } from "../../src/mcp/server.js";
import { capturedLog } from "../support/captured-log.js";
import { testConfig, type GatewayPeers } from "../support/gateway.js";
import { ERAS, callTool, connect, invalidArguments } from "../support/mcp-client.js";

type Tenant = { tenantId: string; userId: string; apiKey: string };

const captured = capturedLog();
let core: CoreServices;
let peers: GatewayPeers;
let gateway: RunningGateway;
let tenant: Tenant;
let fingerprint: () => Promise<string>;

beforeAll(async () => {
  core = await startCoreServices({ label: "hostile-input" });
  peers = { memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk };
  gateway = await startGateway(testConfig(peers), { log: captured.log });
  tenant = await core.createTenant("hostile input");
  fingerprint = await createRowFingerprint(core.ownerPool);
});

afterAll(async () => {
  await gateway?.close();
  await core?.close();
});

const NUL = "\u0000";
const LONE = "\ud800";

async function rest(
  path: string,
  init: RequestInit & { json?: unknown; key?: string | null } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers = new Headers(init.headers);
  if (init.key !== null) headers.set("Authorization", `Bearer ${init.key ?? tenant.apiKey}`);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("Content-Type", "application/json");
    body = JSON.stringify(init.json);
  }
  const res = await fetch(`${gateway.url}${path}`, { ...init, headers, body });
  const text = await res.text();
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { text };
  }
  return { status: res.status, body: parsed };
}

/** Runs `act`, then checks no row changed and nothing was logged at error level meanwhile. */
async function refusedWithoutTrace<T>(act: () => Promise<T>): Promise<T> {
  const before = await fingerprint();
  const linesBefore = captured.lines.length;
  const result = await act();
  expect(await fingerprint(), "a refused request changed a row").toBe(before);
  const errors = captured.lines.slice(linesBefore).filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
  expect(errors, "a refused request was logged as our failure").toEqual([]);
  return result;
}

describe("NUL and unpaired surrogates never reach PostgreSQL", () => {
  it("a REST body: 400 naming the field, nothing stored", async () => {
    for (const [field, value] of [
      ["content", `before${NUL}after`],
      ["topic", `half a pair ${LONE}`],
      ["project", `\udc00 trailing half`],
    ] as const) {
      const answer = await refusedWithoutTrace(() =>
        rest("/api/v1/memories", { method: "POST", json: { memoryType: "note", topic: "t", content: "c", [field]: value } }),
      );
      expect(answer.status, field).toBe(400);
      expect(answer.body).toMatchObject({ error: "invalid_input", field, detail: `${field}: ${UNSTORABLE_TEXT_MESSAGE}` });
    }
    // A well-formed pair (an emoji) is text like any other.
    expect((await rest("/api/v1/memories", { method: "POST", json: { memoryType: "note", topic: "emoji 😀", content: "paired 😀 surrogates" } })).status).toBe(
      201,
    );
  });

  it("a REST query string: 400 naming the parameter", async () => {
    const listing = await refusedWithoutTrace(() => rest("/api/v1/memories?project=a%00b"));
    expect(listing).toMatchObject({ status: 400, body: { error: "invalid_input", field: "project" } });
    const facts = await refusedWithoutTrace(() => rest("/api/v1/facts?subject=%00"));
    expect(facts).toMatchObject({ status: 400, body: { error: "invalid_input", field: "subject" } });
    const search = await refusedWithoutTrace(() => rest("/api/v1/search", { method: "POST", json: { query: `q${NUL}` } }));
    expect(search).toMatchObject({ status: 400, body: { field: "query" } });
  });

  it("MCP arguments: an isError result naming the field, nothing stored", async () => {
    const client = await connect(gateway.url, tenant.apiKey, ERAS[0]);
    try {
      const refused = await refusedWithoutTrace(() =>
        invalidArguments(callTool(client, "remember", { memoryType: "note", topic: "t", content: `x${NUL}y`, tags: [LONE] })),
      );
      expect(refused.data.fields).toEqual(["content", "tags.0"]);
      expect(refused.message).not.toContain(NUL);
      const scoped = await refusedWithoutTrace(() =>
        invalidArguments(callTool(client, "configure_scope", { action: "set_mappings", name: "work", projects: [`p${NUL}`] })),
      );
      expect(scoped.data.fields).toEqual(["projects.0"]);
    } finally {
      await client.close();
    }
  });

  it("the OAuth endpoints, with no login: 400 naming the parameter, never a 500", async () => {
    const clientId = await registerPublicClient(gateway.url);
    const token = await refusedWithoutTrace(() =>
      tokenRequest(gateway.url, { grant_type: "authorization_code", code: `c${NUL}`, client_id: clientId, redirect_uri: REDIRECT_URI, code_verifier: "v" }),
    );
    expect(token).toMatchObject({ status: 400, body: { error: "invalid_request", error_description: `code ${UNSTORABLE_TEXT_MESSAGE}` } });
    const basic = Buffer.from(`${encodeURIComponent(`id${NUL}`)}:secret`).toString("base64");
    const basicAuth = await refusedWithoutTrace(() =>
      tokenRequest(gateway.url, { grant_type: "refresh_token", refresh_token: "r" }, { Authorization: `Basic ${basic}` }),
    );
    expect(basicAuth).toMatchObject({ status: 401, body: { error: "invalid_client" } });
    const revoke = await refusedWithoutTrace(() =>
      fetch(`${gateway.url}/oauth/revoke`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token: `t${NUL}`, client_id: clientId }),
      }),
    );
    expect(revoke.status).toBe(400);
    const page = await refusedWithoutTrace(() => fetch(`${gateway.url}/oauth/authorize?client_id=%00&response_type=code`, { redirect: "manual" }));
    expect(page.status).toBe(400);
    for (const metadata of [
      { client_name: `name${NUL}`, redirect_uris: [REDIRECT_URI] },
      { redirect_uris: [`${REDIRECT_URI}${NUL}`] },
      { redirect_uris: [REDIRECT_URI], software_id: LONE },
    ]) {
      const registered = await refusedWithoutTrace(() => rest("/oauth/register", { method: "POST", key: null, json: metadata }));
      expect(registered.status, JSON.stringify(Object.keys(metadata))).toBe(400);
      expect(String(registered.body.error)).toMatch(/^invalid_(client_metadata|redirect_uri)$/);
    }
  });
});

describe("a malformed percent-escape in a path id", () => {
  it("answers 404 before authentication and never logs the raw path", async () => {
    const linesBefore = captured.lines.length;
    for (const path of ["/api/v1/memories/%", "/api/v1/memories/%ff", "/api/v1/memories/%E0%A4%A/history", "/api/v1/proposals/%zz/apply"]) {
      for (const key of [tenant.apiKey, null]) {
        const answer = await refusedWithoutTrace(() => rest(path, { method: path.endsWith("apply") ? "POST" : "GET", key }));
        expect(answer.status, path).toBe(404);
        expect(answer.body).toMatchObject({ error: "not_found" });
      }
    }
    const browser = new Browser(gateway.url);
    await browser.signIn(tenant.apiKey);
    expect((await browser.get("/ui/memories/%")).status).toBe(404);
    const logged = captured.lines.slice(linesBefore).join("\n");
    expect(logged).not.toMatch(/%ff|%zz|%E0|Failed to decode/i);
  });
});

describe("query keys named like built-in object properties", () => {
  it("are unknown parameters (400 naming them), not a TypeError", async () => {
    const facts = await refusedWithoutTrace(() => rest("/api/v1/facts?constructor=x&__proto__=y"));
    expect(facts).toMatchObject({ status: 400, body: { error: "invalid_input", field: "constructor" } });
    for (const path of [
      "/api/v1/facts?__proto__=y",
      "/api/v1/facts?toString=1",
      "/api/v1/memories?constructor=x",
      "/api/v1/briefing?kind=all&__proto__=x",
      "/api/v1/proposals?hasOwnProperty=1",
    ]) {
      expect((await refusedWithoutTrace(() => rest(path))).status, path).toBe(400);
    }
    const browser = new Browser(gateway.url);
    await browser.signIn(tenant.apiKey);
    const listed = await browser.get("/ui/proposals?done=constructor");
    expect(listed.status).toBe(200);
    expect(listed.html).not.toMatch(/function Object/);
  });
});

describe("a Content-Encoding the body does not have", () => {
  it("answers 400 (a body that really is compressed still works)", async () => {
    const json = JSON.stringify({ memoryType: "note", topic: "encoded", content: "An honestly compressed body." });
    for (const encoding of ["gzip", "deflate", "br"]) {
      const answer = await refusedWithoutTrace(() =>
        rest("/api/v1/memories", { method: "POST", headers: { "Content-Type": "application/json", "Content-Encoding": encoding }, body: json }),
      );
      expect(answer.status, encoding).toBe(400);
      expect(answer.body).toMatchObject({ error: "invalid_input" });
    }
    const imported = await refusedWithoutTrace(() =>
      rest("/api/v1/import", { method: "POST", headers: { "Content-Type": "application/x-ndjson", "Content-Encoding": "gzip" }, body: `${json}\n` }),
    );
    expect(imported.status).toBe(400);
    const honest = await rest("/api/v1/memories", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Content-Encoding": "gzip" },
      body: new Uint8Array(gzipSync(json)),
    });
    expect(honest.status).toBe(201);
  });
});

describe("the consent form with a field sent twice", () => {
  it("answers 403 on the page, never a server_error redirect", async () => {
    const clientId = await registerPublicClient(gateway.url);
    const { challenge } = pkcePair();
    const url = authorizeUrl(gateway.url, {
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    const page = await openConsent(url);
    expect(page.status).toBe(200);
    const twice = (name: string, value: string) => {
      const body = new URLSearchParams({ ...page.hidden, decision: "allow", api_key: tenant.apiKey, csrf_token: "x" });
      body.delete(name);
      body.append(name, value);
      body.append(name, value);
      return body;
    };
    for (const [name, withCookie] of [
      ["csrf_token", false],
      ["api_key", false],
      ["api_key", true],
      ["decision", true],
    ] as const) {
      const answer = await refusedWithoutTrace(() =>
        fetch(`${gateway.url}/oauth/authorize`, {
          method: "POST",
          redirect: "manual",
          headers: { "Content-Type": "application/x-www-form-urlencoded", ...(withCookie && page.cookie ? { Cookie: page.cookie } : {}) },
          body: twice(name, name === "csrf_token" ? "x" : name === "api_key" ? tenant.apiKey : "allow"),
        }),
      );
      expect(answer.status, `${name} twice${withCookie ? " with the cookie" : ""}`).toBe(403);
      expect(answer.headers.get("location")).toBeNull();
    }
    // The untouched form still works.
    const ok = await submitConsent(gateway.url, page, { api_key: tenant.apiKey, decision: "allow" });
    expect(ok.status).toBe(302);
    expect(new URL(ok.headers.get("location")!).searchParams.get("code")).toBeTruthy();
  });
});

describe("an import whose client goes away", () => {
  it("stops instead of running on: fewer records are stored than were sent", async () => {
    const importer = await createTenantWithKey(core.ownerPool, { tenantName: "import walker", scopes: [SCOPES.read, SCOPES.write] });
    const total = 3000;
    const lines = Array.from({ length: total }, (_, i) =>
      JSON.stringify({
        kind: "memory",
        key: `k${i}`,
        memoryType: "note",
        topic: `walk ${i}`.padEnd(MAX_TOPIC_LENGTH / 8, "."),
        content: `Imported record number ${i}.`,
      }),
    );
    const stored = async () =>
      Number((await core.ownerPool.query<{ n: string }>("SELECT count(*) AS n FROM memories WHERE tenant_id = $1", [importer.tenantId])).rows[0]!.n);
    const abort = new AbortController();
    const sent = fetch(`${gateway.url}/api/v1/import`, {
      method: "POST",
      headers: { Authorization: `Bearer ${importer.apiKey}`, "Content-Type": "application/x-ndjson" },
      body: lines.join("\n") + "\n",
      signal: abort.signal,
    }).catch((err: unknown) => err);
    // Hang up once the import is under way.
    while ((await stored()) === 0) await new Promise((r) => setTimeout(r, 50));
    abort.abort();
    await sent;
    // Then it settles: the count stops moving well before the whole file is stored.
    let previous: number;
    let current = await stored();
    for (let settled = 0; settled < 3;) {
      await new Promise((r) => setTimeout(r, 500));
      previous = current;
      current = await stored();
      settled = current === previous ? settled + 1 : 0;
    }
    expect(current).toBeGreaterThan(0);
    expect(current).toBeLessThan(total);
    expect(captured.text()).toContain("import stopped: the client disconnected");
    // Re-running skips what is stored and finishes the rest.
    const rerun = await fetch(`${gateway.url}/api/v1/import`, {
      method: "POST",
      headers: { Authorization: `Bearer ${importer.apiKey}`, "Content-Type": "application/x-ndjson" },
      body: lines.slice(0, current + 10).join("\n") + "\n",
    });
    const report = (await rerun.json()) as { created: number; skipped: number };
    expect(report.skipped).toBe(current);
    expect(report.created).toBe(10);
  });
});

describe("MCP protocol edges", () => {
  const mcpHeaders = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
  const post = (target: RunningGateway, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${target.url}/mcp`, {
      method: "POST",
      headers: { ...mcpHeaders, Authorization: `Bearer ${tenant.apiKey}`, "mcp-protocol-version": "2025-11-25", ...headers },
      body: JSON.stringify(body),
    });
  const rpcAnswer = async (res: Response): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string } }> => {
    const text = await res.text();
    const json = text.startsWith("{")
      ? text
      : text
          .split("\n")
          .find((l) => l.startsWith("data:"))!
          .slice(5);
    return JSON.parse(json) as { result?: Record<string, unknown>; error?: { code: number; message: string } };
  };

  it("answers a Host header no URL can hold with 400, not a server error", async () => {
    const { port } = new URL(gateway.url);
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port,
          path: "/mcp",
          method: "POST",
          headers: { ...mcpHeaders, Host: "a b", Authorization: `Bearer ${tenant.apiKey}`, "content-length": Buffer.byteLength(body) },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (text += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
    expect(answer.status).toBe(400);
    expect(answer.text).toContain("Host header");
  });

  it("answers a request without params (or with malformed ones) -32602 on every method that takes them", async () => {
    for (const [method, params] of [
      ["prompts/get", undefined],
      ["resources/read", undefined],
      ["completion/complete", undefined],
      ["tools/call", undefined],
      ["initialize", undefined],
      ["prompts/get", {}],
      ["resources/read", { uri: 7 }],
      ["completion/complete", { ref: { type: "ref/prompt" } }],
      ["tools/call", { name: "search", arguments: [1, 2] }],
    ] as const) {
      const answer = await rpcAnswer(await post(gateway, { jsonrpc: "2.0", id: 9, method, ...(params === undefined ? {} : { params }) }));
      expect(answer.error?.code, `${method} ${JSON.stringify(params)}`).toBe(-32602);
      expect(answer.error?.message).toMatch(new RegExp(`^Invalid params for ${method}: params`));
      expect(answer.error?.message).not.toContain("\n");
    }
    // Methods whose params are optional still work without them.
    for (const method of ["ping", "tools/list", "prompts/list", "resources/templates/list"]) {
      expect((await rpcAnswer(await post(gateway, { jsonrpc: "2.0", id: 1, method }))).result, method).toBeDefined();
    }
  });

  it("advertises only the capabilities a stateless server delivers, in both eras", async () => {
    const initialized = await rpcAnswer(
      await post(gateway, {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } },
      }),
    );
    expect(initialized.result?.capabilities).toEqual({ ...SERVER_CAPABILITIES, completions: {} });
    const modern: Client = await connect(gateway.url, tenant.apiKey, ERAS[1]);
    try {
      expect(modern.getServerCapabilities()).toEqual({ ...SERVER_CAPABILITIES, completions: {} });
    } finally {
      await modern.close();
    }
  });

  it("allows the server's own origin with no allowlist configured, and still refuses any other", async () => {
    const bare = await startGateway(testConfig(peers, { MCP_ALLOWED_ORIGINS: "" }), { log: captured.log });
    const port = new URL(bare.url).port;
    try {
      const ping = { jsonrpc: "2.0", id: 1, method: "ping" };
      for (const origin of [bare.url, `http://localhost:${port}`, `http://127.0.0.1:${port}`, `http://[::1]:${port}`]) {
        expect((await post(bare, ping, { Origin: origin })).status, origin).toBe(200);
      }
      for (const origin of ["http://evil.example.com", `http://localhost:${Number(port) + 1}`, `https://127.0.0.1:${port}`, "null"]) {
        expect((await post(bare, ping, { Origin: origin })).status, origin).toBe(403);
      }
    } finally {
      await bare.close();
    }
    const published = await startGateway(testConfig(peers, { MCP_ALLOWED_ORIGINS: "", PUBLIC_URL: "https://memory.example.com/base" }), { log: captured.log });
    try {
      expect((await post(published, { jsonrpc: "2.0", id: 1, method: "ping" }, { Origin: "https://memory.example.com" })).status).toBe(200);
      expect((await post(published, { jsonrpc: "2.0", id: 1, method: "ping" }, { Origin: "https://evil.example.com" })).status).toBe(403);
    } finally {
      await published.close();
    }
  });
});
