/**
 * Property-based fuzzing of every REST route, every MCP method and every OAuth and UI endpoint
 * with hostile input (test/support/hostile.ts), against the real gateway on the real memory and
 * search services. Fixed seed and a bounded number of runs, so a run is repeatable and a failure
 * is shrunk to its smallest reproducer. For every request:
 *
 * - never a 5xx, never a JSON-RPC internal error (-32603), never an `internal_error` tool result;
 * - a refused request (4xx, a JSON-RPC error, an isError result) changes no row;
 * - nothing is logged at error level (our own faults are logged there);
 *
 * and afterwards every process is still serving.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Browser } from "../../../../test/support/browser.js";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { createRowFingerprint } from "../../../../test/support/row-fingerprint.js";
import { startGateway, type RunningGateway } from "../../src/gateway.js";
import { TOOLS } from "../../src/mcp/server.js";
import { capturedLog } from "../support/captured-log.js";
import { testConfig } from "../support/gateway.js";
import { formBody, hostileQuery, hostileSegment, hostileString, hostileValue, jsonBody, mutated, type BodySpec } from "../support/hostile.js";

/** The seed every property runs with (change it to explore; a failure prints the one to replay). */
const SEED = 20261101;

interface RequestSpec {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  query?: string;
  body?: BodySpec;
  headers?: Record<string, string>;
  /** Send the session cookie of a signed-in browser (UI routes). */
  session?: boolean;
  /** Leave out the API key (the unauthenticated surfaces). */
  anonymous?: boolean;
}

const captured = capturedLog();
let core: CoreServices;
let gateway: RunningGateway;
let apiKey = "";
let sessionCookie = "";
let memoryId = "";
let fingerprint: () => Promise<string>;
/** The rows as the last request left them: requests run one at a time and nothing else writes. */
let rows = "";
let sent = 0;

beforeAll(async () => {
  core = await startCoreServices({ label: "fuzz" });
  const peers = { memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk };
  gateway = await startGateway(testConfig(peers), { log: captured.log });
  const tenant = await core.createTenant("fuzz");
  apiKey = tenant.apiKey;
  const created = await fetch(`${gateway.url}/api/v1/memories`, {
    method: "POST",
    headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({ memoryType: "commitment", topic: "seed", content: "A memory the fuzzer can aim at." }),
  });
  memoryId = ((await created.json()) as { memory: { id: string } }).memory.id;
  const browser = new Browser(gateway.url);
  await browser.signIn(apiKey);
  sessionCookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  fingerprint = await createRowFingerprint(core.ownerPool);
  rows = await fingerprint();
});

afterAll(async () => {
  console.log(`fuzz: ${sent} requests sent (seed ${SEED})`);
  await gateway?.close();
  await core?.close();
});

interface Answer {
  status: number;
  /** The JSON-RPC messages or JSON document in the body, if any. */
  documents: unknown[];
  text: string;
}

async function send(spec: RequestSpec): Promise<Answer> {
  sent += 1;
  const headers: Record<string, string> = { ...spec.headers };
  if (!spec.anonymous && !spec.session) headers.Authorization = `Bearer ${apiKey}`;
  if (spec.session) headers.Cookie = sessionCookie;
  if (spec.body?.contentType) headers["Content-Type"] = spec.body.contentType;
  if (spec.body?.contentEncoding) headers["Content-Encoding"] = spec.body.contentEncoding;
  const url = `${gateway.url}${spec.path}${spec.query ? `?${spec.query}` : ""}`;
  const res = await fetch(url, { method: spec.method, headers, body: spec.body?.text, redirect: "manual" });
  const text = await res.text();
  const documents: unknown[] = [];
  const candidates =
    text.trimStart().startsWith("event:") || text.includes("\ndata:")
      ? text
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5))
      : [text];
  for (const candidate of candidates) {
    try {
      documents.push(JSON.parse(candidate));
    } catch {
      // HTML pages, empty bodies
    }
  }
  return { status: res.status, documents, text };
}

/** What the request answered, as far as "refused" and "our fault" go. */
function judge(answer: Answer): { refused: boolean; ourFault: string | undefined } {
  if (answer.status >= 500) return { refused: true, ourFault: `HTTP ${answer.status}: ${answer.text.slice(0, 300)}` };
  let refused = answer.status >= 400;
  for (const doc of answer.documents.flat()) {
    if (doc === null || typeof doc !== "object") continue;
    const message = doc as { error?: { code?: number; message?: string }; result?: { isError?: boolean; content?: { text?: string }[] } };
    if (message.error !== undefined && typeof message.error === "object") {
      refused = true;
      if (message.error.code === -32603) return { refused, ourFault: `JSON-RPC internal error: ${message.error.message ?? ""}` };
    }
    if (message.result?.isError) {
      refused = true;
      const text = message.result.content?.map((c) => c.text ?? "").join("") ?? "";
      if (text.startsWith("internal_error")) return { refused, ourFault: `tool result: ${text}` };
    }
  }
  return { refused, ourFault: undefined };
}

/** Sends one request and holds it to the properties in the header. */
async function holds(spec: RequestSpec): Promise<void> {
  const before = rows;
  const linesBefore = captured.lines.length;
  const answer = await send(spec);
  rows = await fingerprint();
  const { refused, ourFault } = judge(answer);
  expect(ourFault, `${spec.method} ${spec.path}`).toBeUndefined();
  const errors = captured.lines.slice(linesBefore).filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
  expect(errors, `${spec.method} ${spec.path}`).toEqual([]);
  if (refused) expect(rows, `${spec.method} ${spec.path} was refused (${answer.status}) but changed a row`).toBe(before);
}

const segmentOrSeed = fc.oneof(hostileSegment, fc.constant("SEED"));
const withId = (template: string) => segmentOrSeed.map((segment) => template.replace(":id", segment === "SEED" ? memoryId : segment));

const MEMORY = { memoryType: "note", topic: "fuzzed", content: "Fuzzed content." };

/** Every REST route with a body, query or path id worth attacking. */
const restRequest: fc.Arbitrary<RequestSpec> = fc.oneof(
  fc.record({
    method: fc.constant("POST" as const),
    path: fc.constant("/api/v1/memories"),
    body: jsonBody(mutated({ ...MEMORY, tags: ["t"], facts: [{ subject: "s", predicate: "p", value: "v" }] })),
  }),
  fc.record({ method: fc.constant("GET" as const), path: withId("/api/v1/memories/:id") }),
  fc.record({
    method: fc.constant("POST" as const),
    path: withId("/api/v1/memories/:id/revise"),
    body: jsonBody(mutated({ ...MEMORY, edgeIntent: "updates" })),
  }),
  fc.record({ method: fc.constant("POST" as const), path: withId("/api/v1/memories/:id/resolve"), body: jsonBody(mutated({ status: "waiting" })) }),
  fc.record({ method: fc.constant("POST" as const), path: withId("/api/v1/memories/:id/archive") }),
  fc.record({ method: fc.constant("GET" as const), path: withId("/api/v1/memories/:id/history") }),
  fc.record({
    method: fc.constant("POST" as const),
    path: fc.constant("/api/v1/search"),
    body: jsonBody(mutated({ query: "fuzzed", limit: 3, asOf: { validAt: "2026-01-01T00:00:00Z" } })),
  }),
  {
    weight: 4,
    arbitrary: fc.record({
      method: fc.constant("GET" as const),
      path: fc.constantFrom(
        "/api/v1/memories",
        "/api/v1/memories/facets",
        "/api/v1/scopes",
        "/api/v1/facts",
        "/api/v1/briefing",
        "/api/v1/environment",
        "/api/v1/proposals",
        "/api/v1/export",
        "/api/v1/nowhere",
      ),
      query: hostileQuery,
    }),
  },
  fc.record({
    method: fc.constant("POST" as const),
    path: fc.constant("/api/v1/scopes"),
    body: jsonBody(mutated({ action: "set_aliases", name: "fuzz", aliases: ["fz"] })),
  }),
  fc.record({
    method: fc.constant("POST" as const),
    path: fc.constant("/api/v1/handoff"),
    body: jsonBody(mutated({ selector: { kind: "scope", scope: "fuzz" }, sectionLimit: 2 })),
  }),
  fc.record({ method: fc.constant("POST" as const), path: withId("/api/v1/proposals/:id/apply") }),
  fc.record({ method: fc.constant("POST" as const), path: withId("/api/v1/proposals/:id/reject"), body: jsonBody(mutated({ rationale: "no" })) }),
  fc.record({
    method: fc.constant("POST" as const),
    path: fc.constant("/api/v1/import"),
    query: fc.oneof(
      fc.constant("format=3ngram"),
      fc.constant("format=mcp-memory"),
      fc.constant("format=mem0"),
      fc.constant("format=basic-memory"),
      hostileQuery,
    ),
    body: fc.array(mutated({ kind: "memory", key: "k", memoryType: "note", topic: "imported", content: "Imported." }), { maxLength: 4 }).chain((records) =>
      fc.record({
        contentType: fc.constantFrom("application/x-ndjson", "text/plain", "application/json"),
        contentEncoding: fc.constantFrom(undefined, undefined, "gzip", "br"),
        text: fc.constant(records.map((r) => JSON.stringify(r) ?? "").join("\n")),
      }),
    ),
  }),
  fc.record({
    method: fc.constantFrom("GET" as const, "POST" as const, "PUT" as const, "DELETE" as const),
    path: fc.constantFrom("/health", "/ready", "/metrics", "/api/v1/memories/facets"),
    query: hostileQuery,
    anonymous: fc.boolean(),
  }),
);

const PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2026-07-28", "1999-01-01"];
const TOOL_TEMPLATES: Record<string, Record<string, unknown>> = {
  remember: MEMORY,
  search: { query: "q" },
  get_facts: { subject: "s" },
  get_memories: { ids: ["SEED"] },
  revise: { ...MEMORY, predecessorId: "SEED" },
  resolve: { memoryId: "SEED", status: "waiting" },
  configure_scope: { action: "create", name: "fz" },
  briefing: { selector: { kind: "all" } },
  handoff: { selector: { kind: "project", project: "p" } },
  describe_environment: {},
  review_proposals: { action: "list", limit: 2 },
};
const METHOD_PARAMS: Record<string, Record<string, unknown>> = {
  initialize: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "fuzz", version: "0" } },
  ping: {},
  "tools/list": {},
  "prompts/list": {},
  "prompts/get": { name: "debrief", arguments: { scope: "fuzz" } },
  "resources/list": {},
  "resources/templates/list": {},
  "resources/read": { uri: "threengram://memory/SEED" },
  "completion/complete": { ref: { type: "ref/prompt", name: "debrief" }, argument: { name: "scope", value: "f" } },
  "server/discover": {},
  "logging/setLevel": { level: "debug" },
  "resources/subscribe": { uri: "threengram://memory/SEED" },
};

const seeded = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value).replaceAll('"SEED"', JSON.stringify(memoryId)).replaceAll("/SEED", `/${memoryId}`));

const toolCall = fc
  .constantFrom(...TOOLS.map((t) => t.name), "no_such_tool")
  .chain((name) => fc.record({ name: fc.oneof({ weight: 5, arbitrary: fc.constant(name) }, hostileValue), arguments: mutated(TOOL_TEMPLATES[name] ?? {}) }));
const rpcParams = fc.constantFrom(...Object.keys(METHOD_PARAMS), "tools/call", "notifications/initialized").chain((method) =>
  fc.record({
    method: fc.oneof({ weight: 6, arbitrary: fc.constant(method) }, hostileValue),
    params:
      method === "tools/call"
        ? fc.oneof({ weight: 4, arbitrary: toolCall }, hostileValue, fc.constant(undefined))
        : fc.oneof(mutated(METHOD_PARAMS[method] ?? {}), fc.constant(undefined)),
    id: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 1, max: 1000 }) }, hostileValue, fc.constant(undefined)),
  }),
);

/** Every MCP method (and some that are not), each era's headers, hostile params and envelopes. */
const mcpRequest: fc.Arbitrary<RequestSpec> = fc
  .record({
    message: rpcParams,
    version: fc.constantFrom(...PROTOCOL_VERSIONS, undefined),
    envelope: fc.boolean(),
    mcpMethodHeader: fc.constantFrom(undefined, undefined, "same", "tools/call", "evil/<script>", ""),
    encoding: fc.constantFrom(undefined, undefined, undefined, "gzip"),
    raw: fc.option(fc.constantFrom("{", "[]", "null", "[{}]", '{"jsonrpc":"2.0"}', "\u0000"), { freq: 10 }),
  })
  .map(({ message, version, envelope, mcpMethodHeader, encoding, raw }) => {
    const { method, params, id } = message;
    const withMeta =
      envelope && version === "2026-07-28" && params !== null && typeof params === "object" && !Array.isArray(params)
        ? {
            ...(params as object),
            _meta: {
              "io.modelcontextprotocol/protocolVersion": version,
              "io.modelcontextprotocol/clientInfo": { name: "fuzz", version: "0" },
              "io.modelcontextprotocol/clientCapabilities": {},
            },
          }
        : params;
    const rpc = { jsonrpc: "2.0", ...(id === undefined ? {} : { id }), method, ...(withMeta === undefined ? {} : { params: seeded(withMeta) }) };
    const headers: Record<string, string> = { Accept: "application/json, text/event-stream" };
    if (version !== undefined) headers["MCP-Protocol-Version"] = version;
    const same = mcpMethodHeader === "same" && typeof method === "string" && /^[\x20-\x7e]*$/.test(method) ? method : undefined;
    if (mcpMethodHeader !== undefined) headers["Mcp-Method"] = mcpMethodHeader === "same" ? (same ?? "") : mcpMethodHeader;
    return {
      method: "POST" as const,
      path: "/mcp",
      headers,
      body: { contentType: "application/json", ...(encoding ? { contentEncoding: encoding } : {}), text: raw ?? JSON.stringify(rpc) ?? "" },
    };
  });

/** The authorization server's endpoints, all reachable without a login. */
const oauthRequest: fc.Arbitrary<RequestSpec> = fc.oneof(
  fc.record({
    method: fc.constant("POST" as const),
    path: fc.constant("/oauth/token"),
    anonymous: fc.constant(true),
    body: formBody(["grant_type", "code", "client_id", "client_secret", "redirect_uri", "code_verifier", "refresh_token", "scope", "resource"]),
  }),
  fc.record({
    method: fc.constant("POST" as const),
    path: fc.constant("/oauth/token"),
    anonymous: fc.constant(true),
    headers: hostileString.map((s) => ({ Authorization: `Basic ${Buffer.from(`${s}:${s}`).toString("base64")}` })),
    body: formBody(["grant_type", "refresh_token", "client_id"]),
  }),
  fc.record({
    method: fc.constant("POST" as const),
    path: fc.constant("/oauth/revoke"),
    anonymous: fc.constant(true),
    body: formBody(["token", "token_type_hint", "client_id", "client_secret"]),
  }),
  fc.record({
    method: fc.constant("GET" as const),
    path: fc.constant("/oauth/authorize"),
    anonymous: fc.constant(true),
    query: fc.oneof(
      hostileQuery,
      formBody(["client_id", "redirect_uri", "response_type", "code_challenge", "code_challenge_method", "scope", "state", "resource"]).map((b) => b.text),
    ),
  }),
  fc.record({
    method: fc.constant("POST" as const),
    path: fc.constant("/oauth/authorize"),
    anonymous: fc.constant(true),
    body: formBody(["client_id", "redirect_uri", "response_type", "code_challenge", "code_challenge_method", "csrf_token", "api_key", "decision", "state"]),
  }),
  fc.record({
    method: fc.constant("POST" as const),
    path: fc.constant("/oauth/register"),
    anonymous: fc.constant(true),
    body: jsonBody(
      mutated({ client_name: "fuzz", redirect_uris: ["http://127.0.0.1:7777/cb"], grant_types: ["authorization_code"], token_endpoint_auth_method: "none" }),
    ),
  }),
  fc.record({
    method: fc.constant("GET" as const),
    path: fc.constantFrom("/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource/mcp", "/.well-known/jwks.json"),
    anonymous: fc.constant(true),
    query: hostileQuery,
  }),
);

/** The review UI, signed in and not. */
const uiRequest: fc.Arbitrary<RequestSpec> = fc.oneof(
  fc.record({
    method: fc.constant("GET" as const),
    path: fc.constantFrom("/ui/", "/ui/proposals", "/ui/sign-in", "/ui/style.css", "/ui/nowhere"),
    query: hostileQuery,
    session: fc.boolean(),
  }),
  fc.record({ method: fc.constant("GET" as const), path: fc.oneof(withId("/ui/memories/:id"), withId("/ui/proposals/:id")), session: fc.constant(true) }),
  fc.record({
    method: fc.constant("POST" as const),
    path: fc.oneof(withId("/ui/proposals/:id/accept"), withId("/ui/proposals/:id/reject"), fc.constant("/ui/sign-out")),
    session: fc.constant(true),
    body: formBody(["csrf_token", "rationale"]),
  }),
  fc.record({
    method: fc.constant("POST" as const),
    path: fc.constant("/ui/sign-in"),
    anonymous: fc.constant(true),
    body: formBody(["csrf_token", "api_key"]),
  }),
);

/** 2,000 requests (measured at 30-60 s on the shared 2-core machine, under other engineers' load). */
const RUNS = { rest: 700, mcp: 800, oauth: 300, ui: 200 };

describe("fuzzing the gateway with hostile input", () => {
  it.each(Object.entries({ rest: restRequest, mcp: mcpRequest, oauth: oauthRequest, ui: uiRequest }))(
    "%s: no 5xx, no internal error, no row changed by a refusal",
    async (surface, arbitrary) => {
      await fc.assert(
        fc.asyncProperty(arbitrary, (spec) => holds(spec)),
        { seed: SEED, numRuns: RUNS[surface as keyof typeof RUNS] },
      );
    },
    600_000,
  );

  it("leaves every process serving", async () => {
    expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
    expect((await fetch(`${gateway.url}/ready`)).status).toBe(200);
    const stored = await fetch(`${gateway.url}/api/v1/memories`, {
      method: "POST",
      headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({ memoryType: "note", topic: "after the storm", content: `Still writing after ${sent} hostile requests.` }),
    });
    expect(stored.status).toBe(201);
    expect(sent).toBeGreaterThanOrEqual(RUNS.rest + RUNS.mcp + RUNS.oauth + RUNS.ui);
  });
});
