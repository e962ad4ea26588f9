/**
 * The OpenAPI 3.1 contract against the real thing: the served document is valid to an OpenAPI
 * parser, names exactly the routes of the README's REST table, accepts every query parameter it
 * documents, and every route's real answers (successes and errors, from a real gateway in front of
 * the real services) validate against the schemas it declares for that status.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { dereference, validate } from "@readme/openapi-parser";
import { issueApiKey } from "@3ngram/memory";
import { SCOPES, type CallOptions } from "@3ngram/rpc";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writer } from "../../../../test/support/calls.js";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { REPO_ROOT } from "../../../../test/support/processes.js";
import type { RunningGateway } from "../../src/gateway.js";
import { startTestGateway } from "../support/gateway.js";

// An OpenAPI document is walked freely by path; its shape is what the validator checks.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;
type Tenant = { tenantId: string; userId: string; apiKey: string };

let core: CoreServices;
let gateway: RunningGateway;
let tenant: Tenant;
let served: Json;
let document: Json;
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
/** Every (operation, status) pair a real answer was checked against. */
const checked = new Set<string>();

const asConsolidator = (t: { tenantId: string }): CallOptions => ({ identity: { tenantId: t.tenantId, scopes: [SCOPES.internalConsolidate] } });

beforeAll(async () => {
  core = await startCoreServices({ label: "gateway-openapi" });
  tenant = await core.createTenant("openapi");
  gateway = await startTestGateway({ memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk });
  const res = await fetch(`${gateway.url}/api/v1/openapi.json`);
  expect(res.status).toBe(200);
  served = (await res.json()) as Json;
  document = (await dereference(structuredClone(served) as never)) as Json;
});
afterAll(async () => {
  await gateway?.close();
  await core?.close();
});

/** `| \`GET /api/v1/memories/:id\` | …` rows of the README's REST table → "get /api/v1/memories/{id}". */
function readmeRoutes(): string[] {
  const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
  const table = readme.slice(readme.indexOf("### REST"), readme.indexOf("## Architecture"));
  return [...table.matchAll(/^\| `(GET|POST) ([^`?]+)(?:\?[^`]*)?` \|/gm)].map(
    ([, method, path]) => `${method!.toLowerCase()} ${path!.replace(/:(\w+)/g, "{$1}")}`,
  );
}

function documentedRoutes(doc: Json): string[] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) => Object.keys(item as Json).map((method) => `${method} ${path}`));
}

/** Sends a request and validates the answer against the document's schema for its route and status. */
async function call(
  method: "get" | "post",
  template: string,
  options: { path?: string; query?: string; json?: unknown; body?: string; type?: string; auth?: boolean; key?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.auth !== false) headers.Authorization = `Bearer ${options.key ?? tenant.apiKey}`;
  if (options.json !== undefined) headers["Content-Type"] = "application/json";
  if (options.type !== undefined) headers["Content-Type"] = options.type;
  const url = `${gateway.url}${options.path ?? template}${options.query ? `?${options.query}` : ""}`;
  const res = await fetch(url, {
    method: method.toUpperCase(),
    headers,
    ...(options.json !== undefined ? { body: JSON.stringify(options.json) } : options.body !== undefined ? { body: options.body } : {}),
  });
  const text = await res.text();
  const operation = document.paths[template]?.[method];
  expect(operation, `${method} ${template} is documented`).toBeDefined();
  const answer = operation.responses[String(res.status)];
  expect(answer, `${method} ${template} documents status ${res.status}: ${text.slice(0, 200)}`).toBeDefined();
  const type = (res.headers.get("content-type") ?? "").split(";")[0]!;
  const media = answer.content?.[type];
  expect(media, `${method} ${template} ${res.status} documents ${type}`).toBeDefined();
  if (type === "application/json") {
    const body = JSON.parse(text) as unknown;
    const check = ajv.compile(media.schema);
    expect(check(body), `${method} ${template} ${res.status}: ${ajv.errorsText(check.errors)}`).toBe(true);
    checked.add(`${method} ${template} ${res.status}`);
    return { status: res.status, body: body as Json };
  }
  checked.add(`${method} ${template} ${res.status}`);
  return { status: res.status, body: text };
}

describe("the OpenAPI document", () => {
  it("is served without a credential and is a valid OpenAPI 3.1 document", async () => {
    expect(served.openapi).toBe("3.1.0");
    const result = await validate(structuredClone(served) as never);
    expect(result).toMatchObject({ valid: true });
  });

  it("documents exactly the routes of the README's REST table (the HTML UI aside)", () => {
    const readme = readmeRoutes().filter((r) => !r.startsWith("get /ui"));
    expect(readme.length).toBeGreaterThan(20);
    expect(documentedRoutes(served).sort()).toEqual([...new Set(readme)].sort());
  });

  it("every documented query parameter is one the route accepts", async () => {
    // One request per route that sets every documented parameter together (briefing's selector
    // fields only go together with kind=scope_project), so each must be accepted.
    const samples: Record<string, string> = {
      limit: "5",
      offset: "0",
      type: "decision",
      memoryTypes: "note",
      kind: "scope_project",
      mode: "brief",
      sectionLimit: "3",
      includeUnscoped: "false",
      sections: "commitments",
      format: "3ngram",
      from: "",
      to: "",
      validAt: "2026-01-01T00:00:00Z",
      asKnownAt: "2026-01-01T00:00:00Z",
      recordedAfter: "2026-01-01T00:00:00Z",
      recordedBefore: "2026-02-01T00:00:00Z",
      subject: "s",
      predicate: "p",
      scope: "work",
      project: "atlas",
    };
    // Exclusive pairs are sent in two requests: asOf (validAt, asKnownAt) vs range (from, to), type vs memoryTypes.
    const apart = [
      ["from", "to", "memoryTypes"],
      ["validAt", "asKnownAt", "type"],
    ];
    // `since` takes a cursor from an earlier briefing with the same selector.
    const earlier = await fetch(`${gateway.url}/api/v1/briefing?kind=scope_project&scope=work&project=atlas&includeUnscoped=false`, {
      headers: { Authorization: `Bearer ${tenant.apiKey}` },
    });
    samples.since = ((await earlier.json()) as Json).changesCursor as string;
    let routes = 0;
    for (const [path, item] of Object.entries(served.paths as Json)) {
      const params: Json[] = ((item as Json).get?.parameters ?? []).filter((p: Json) => p.in === "query");
      const names = params.map((p) => p.name as string);
      // A parameter with a closed set of values is sent its first documented one.
      const value = (name: string) => String(samples[name] ?? params.find((p) => p.name === name)?.schema?.enum?.[0] ?? "missing-sample");
      if (names.length === 0) continue;
      routes += 1;
      for (const skip of apart) {
        const query = new URLSearchParams(names.filter((n) => !skip.includes(n)).map((n) => [n, value(n)]));
        const res = await fetch(`${gateway.url}${path}?${query}`, { headers: { Authorization: `Bearer ${tenant.apiKey}` } });
        const body = (await res.json()) as Json;
        expect(res.status, `${path}?${query}: ${JSON.stringify(body)}`).toBe(200);
      }
    }
    expect(routes).toBe(4);
  });

  it("requires only the query parameters a route cannot do without, and gives their defaults", async () => {
    const briefing = (served.paths as Json)["/api/v1/briefing"].get.parameters as Json[];
    expect(briefing.filter((p) => p.required).map((p) => p.name)).toEqual(["kind"]);
    expect(briefing.find((p) => p.name === "mode")?.schema).toMatchObject({ default: "brief" });
    expect(briefing.find((p) => p.name === "includeUnscoped")?.schema).toMatchObject({ default: false });
    // What the document requires is enough.
    expect((await call("get", "/api/v1/briefing", { query: "kind=all" })).status).toBe(200);
  });

  it("documents the Idempotency-Key header on the writes that read it, and the 422 a reused key gets", async () => {
    for (const [path, method] of [
      ["/api/v1/memories", "post"],
      ["/api/v1/memories/{id}/revise", "post"],
    ] as const) {
      const operation = (served.paths as Json)[path][method] as Json;
      expect(operation.parameters, path).toContainEqual(expect.objectContaining({ name: "Idempotency-Key", in: "header", required: false }));
      expect(Object.keys(operation.responses as Json), path).toContain("422");
    }
    const key = { "Idempotency-Key": `"${randomUUID()}"` };
    const write = (content: string) => call("post", "/api/v1/memories", { headers: key, json: { memoryType: "note", topic: "keyed", content } });
    const content = `keyed write ${randomUUID()}`;
    const first = await write(content);
    expect(first.status).toBe(201);
    expect((await write(content)).body).toEqual(first.body);
    const reused = await write(`another body ${randomUUID()}`);
    expect(reused.status).toBe(422);
    expect(reused.body).toMatchObject({ error: "idempotency_key_reused" });
  });

  it("every route's real answers validate against the schema it declares", async () => {
    const memory = await core.publicMemoryClient();
    const created = await call("post", "/api/v1/memories", {
      json: {
        memoryType: "commitment",
        topic: "ship atlas",
        content: `Ship atlas by March ${randomUUID()}`,
        scope: "work",
        project: "atlas",
        dueAt: "2026-03-01T00:00:00Z",
        facts: [{ subject: "atlas", predicate: "eta.days", value: "30" }],
      },
    });
    expect(created.status).toBe(201);
    const id = (created.body as Json).memory.id as string;
    await call("get", "/api/v1/memories");
    await call("get", "/api/v1/memories", { query: "project=atlas&project=other&limit=2" });
    await call("get", "/api/v1/memories/facets");
    await call("get", "/api/v1/memories/{id}", { path: `/api/v1/memories/${id}` });
    await call("get", "/api/v1/memories/{id}/history", { path: `/api/v1/memories/${id}/history` });
    await call("post", "/api/v1/memories/{id}/resolve", { path: `/api/v1/memories/${id}/resolve`, json: { status: "waiting" } });
    const revised = await call("post", "/api/v1/memories/{id}/revise", {
      path: `/api/v1/memories/${id}/revise`,
      json: { memoryType: "commitment", topic: "ship atlas", content: `Ship atlas by April ${randomUUID()}` },
    });
    expect(revised.status).toBe(201);
    const note = await call("post", "/api/v1/memories", { json: { memoryType: "note", topic: "to archive", content: `archive me ${randomUUID()}` } });
    const noteId = (note.body as Json).memory.id as string;
    await call("post", "/api/v1/memories/{id}/archive", { path: `/api/v1/memories/${noteId}/archive` });
    expect((await call("post", "/api/v1/memories/{id}/archive", { path: `/api/v1/memories/${noteId}/archive` })).status).toBe(409);
    await call("post", "/api/v1/search", { json: { query: "ship atlas" } });
    await call("post", "/api/v1/search", { json: { order: "chronological", scope: "work", projection: "compact" } });
    await call("get", "/api/v1/scopes");
    expect((await call("post", "/api/v1/scopes", { json: { action: "create", name: "openapi-scope" } })).status).toBe(201);
    await call("post", "/api/v1/scopes", { json: { action: "list" } });
    await call("get", "/api/v1/facts", { query: "subject=atlas&from=" });
    await call("get", "/api/v1/facts", { query: "subject=atlas" });
    await call("post", "/api/v1/import", { query: "format=3ngram", type: "application/x-ndjson", body: `{"broken": true}\n` });
    await call("get", "/api/v1/export");
    await call("get", "/api/v1/briefing", { query: "kind=all&mode=full" });
    await call("post", "/api/v1/handoff", { json: { selector: { kind: "all" } } });
    await call("get", "/api/v1/environment");
    const older = (await memory.memories.remember({ memoryType: "decision", topic: "older", content: `older ${randomUUID()}` }, writer(tenant))).memory!.id;
    const newer = (await memory.memories.remember({ memoryType: "decision", topic: "newer", content: `newer ${randomUUID()}` }, writer(tenant))).memory!.id;
    const third = (await memory.memories.remember({ memoryType: "note", topic: "third", content: `third ${randomUUID()}` }, writer(tenant))).memory!.id;
    const [edge, other] = (
      await memory.proposals.createConsolidationProposals(
        {
          proposals: [
            { fromId: newer, toId: older, edgeType: "supersedes", similarity: 0.95 },
            { fromId: third, toId: older, edgeType: "extends", similarity: 0.8 },
          ],
        },
        asConsolidator(tenant),
      )
    ).createdIds;
    expect(other).toBeDefined();
    const fact = (
      await memory.proposals.createFactProposals(
        { memoryId: older, extractor: "rules/1", facts: [{ subject: "lift", predicate: "top_set.weight_kg", value: "98" }] },
        asConsolidator(tenant),
      )
    ).createdIds[0]!;
    await call("get", "/api/v1/proposals");
    await call("post", "/api/v1/proposals/{id}/apply", { path: `/api/v1/proposals/${edge}/apply` });
    await call("post", "/api/v1/proposals/{id}/apply", { path: `/api/v1/proposals/${fact}/apply` });
    await call("post", "/api/v1/proposals/{id}/reject", { path: `/api/v1/proposals/${other}/reject`, json: { rationale: "unrelated" } });
    expect((await call("post", "/api/v1/proposals/{id}/reject", { path: `/api/v1/proposals/${other}/reject` })).status).toBe(409);
    const eraser = (await issueApiKey(core.ownerPool, { tenantId: tenant.tenantId, name: "openapi eraser", scopes: [SCOPES.read, SCOPES.write, SCOPES.erase] }))
      .apiKey;
    await call("post", "/api/v1/erasures", { key: eraser, json: { selector: { topic: "to archive" }, reason: "mistake", dryRun: true } });
    await call("post", "/api/v1/memories/{id}/erase", { key: eraser, path: `/api/v1/memories/${noteId}/erase`, json: { reason: "secret" } });
    expect(
      (await call("post", "/api/v1/memories/{id}/erase", { key: eraser, path: `/api/v1/memories/${randomUUID()}/erase`, json: { reason: "secret" } })).status,
    ).toBe(404);
    await call("get", "/api/v1/openapi.json", { auth: false });
    await call("get", "/health", { auth: false });
    await call("get", "/ready", { auth: false });
    await call("get", "/metrics", { auth: false });

    // Every documented success status was produced and checked at least once.
    for (const [path, item] of Object.entries(document.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) {
        for (const status of Object.keys((op as Json).responses).filter((s) => s.startsWith("2")))
          expect(checked, `${method} ${path} ${status}`).toContain(`${method} ${path} ${status}`);
      }
    }
  });

  it("error answers validate against the error schema", async () => {
    const unknown = "0190c0de-0000-7000-8000-00000000beef";
    expect((await call("get", "/api/v1/memories/{id}", { path: `/api/v1/memories/${unknown}` })).status).toBe(404);
    expect((await call("post", "/api/v1/search", { json: { query: "" } })).status).toBe(400);
    expect((await call("post", "/api/v1/search", { body: "not json", type: "text/plain" })).status).toBe(415);
    expect((await call("post", "/api/v1/memories", { body: "{", type: "application/json" })).status).toBe(400);
    expect((await call("get", "/api/v1/facts", { query: "nonsense=1" })).status).toBe(400);
    expect((await call("get", "/api/v1/environment", { auth: false })).status).toBe(401);
    const bad = await call("get", "/api/v1/briefing", { query: "kind=scope" });
    expect(bad).toMatchObject({ status: 400, body: { error: "invalid_input", field: "scope" } });
  });
});
