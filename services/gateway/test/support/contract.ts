/**
 * The gateway's observable contract over HTTP: MCP in every protocol era and REST. It runs
 * against any harness that exposes a gateway URL and three API keys; test/integration/
 * gateway.int.test.ts runs it against the real memory and search services.
 */
import { randomUUID } from "node:crypto";
import { request } from "node:http";
import { getMemoriesOutputSchema, memoryRecordSchema, rememberOutputSchema, searchOutputSchema } from "@3ngram/schema";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERAS, callTool, connect, errorText, invalidArguments, invalidParams, structured } from "./mcp-client.js";

/** The MCP surface this issue serves, sorted; a new tool must be added here deliberately. */
const EXPECTED_TOOLS = [
  "briefing",
  "configure_scope",
  "describe_environment",
  "get_facts",
  "get_memories",
  "handoff",
  "remember",
  "resolve",
  "review_proposals",
  "revise",
  "search",
];

export interface ContractHarness {
  /** Gateway base URL (no trailing slash). */
  url: string;
  /** An allowlisted browser origin. */
  allowedOrigin: string;
  keys: {
    /** memory:read + memory:write in tenant A. */
    readWrite: string;
    /** memory:read only, tenant A. */
    readOnly: string;
    /** memory:read + memory:write in another tenant. */
    otherTenant: string;
  };
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

/** Every object node of an advertised JSON Schema, with its path. */
function objectNodes(schema: unknown, path = "$"): { path: string; node: Json }[] {
  if (schema === null || typeof schema !== "object") return [];
  const node = schema as Json;
  const found: { path: string; node: Json }[] = node.type === "object" || "properties" in node ? [{ path, node }] : [];
  for (const [key, value] of Object.entries(node)) {
    if (key === "properties" && value && typeof value === "object") {
      for (const [prop, sub] of Object.entries(value as Json)) found.push(...objectNodes(sub, `${path}.${prop}`));
    } else if (typeof value === "object") {
      found.push(...objectNodes(value, `${path}/${key}`));
    }
  }
  return found;
}

/**
 * Registers the contract. `extra` may register more tests in the same describe, sharing the
 * harness (read it through the getter inside tests).
 */
export function gatewayContract(label: string, start: () => Promise<ContractHarness>, extra?: (harness: () => ContractHarness) => void): void {
  describe(label, () => {
    let h: ContractHarness;
    beforeAll(async () => {
      h = await start();
    });
    afterAll(async () => {
      await h?.close();
    });

    const rest = (path: string, init: RequestInit & { key?: string | null; json?: unknown } = {}) => {
      const headers = new Headers(init.headers);
      if (init.key !== null) headers.set("Authorization", `Bearer ${init.key ?? h.keys.readWrite}`);
      let body = init.body;
      if (init.json !== undefined) {
        headers.set("Content-Type", "application/json");
        body = JSON.stringify(init.json);
      }
      return fetch(`${h.url}${path}`, { ...init, headers, body });
    };

    describe.each(ERAS)("MCP, $name", (era) => {
      let client: Client;
      let ro: Client;
      let other: Client;
      const marker = `marker${randomUUID().slice(0, 8)}`;

      beforeAll(async () => {
        client = await connect(h.url, h.keys.readWrite, era);
        ro = await connect(h.url, h.keys.readOnly, era);
        other = await connect(h.url, h.keys.otherTenant, era);
      });
      afterAll(async () => {
        await Promise.all([client?.close(), ro?.close(), other?.close()]);
      });

      it("negotiates the expected protocol version and advertises instructions", () => {
        expect(client.getNegotiatedProtocolVersion()).toBe(era.expectedVersion);
        const instructions = client.getInstructions() ?? "";
        expect(instructions).toMatch(/search/);
        expect(instructions).toMatch(/remember/);
      });

      it("lists the tools with titles, annotations and schemas", async () => {
        const { tools } = await client.listTools();
        const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
        expect(Object.keys(byName).sort()).toEqual(EXPECTED_TOOLS);
        for (const name of ["remember", "revise", "review_proposals"]) {
          expect(byName[name]?.annotations).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false });
        }
        expect(byName.resolve?.annotations).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false });
        // The one destructive tool: delete removes a scope registry entry (never memories).
        expect(byName.configure_scope?.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false });
        for (const name of ["search", "get_memories", "get_facts", "briefing", "handoff", "describe_environment"]) {
          expect(byName[name]?.annotations).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
        }
        for (const tool of tools) {
          expect(tool.title).toBeTruthy();
          expect((tool.description ?? "").length).toBeGreaterThan(80);
          // Inputs are closed (unknown keys rejected); outputs are open at every depth for additive growth.
          // A discriminated input (configure_scope) is closed in every variant instead.
          const variants = (tool.inputSchema as { oneOf?: Array<{ additionalProperties?: unknown }> }).oneOf ?? [tool.inputSchema];
          for (const variant of variants) expect(variant.additionalProperties, `${tool.name} input`).toBe(false);
          const outputNodes = objectNodes(tool.outputSchema);
          expect(outputNodes.length).toBeGreaterThan(0);
          for (const { path, node } of outputNodes) expect(node.additionalProperties, `${tool.name} output ${path}`).toBe(true);
        }
      });

      let rememberedId = "";

      it("remember stores a memory and answers the reference", async () => {
        const out = structured(
          await callTool(client, "remember", {
            memoryType: "decision",
            topic: `database choice ${marker}`,
            content: `We chose PostgreSQL with pgvector for ${marker} storage.`,
            scope: "work",
            project: "atlas",
            tags: ["infra"],
          }),
        );
        const parsed = rememberOutputSchema.parse(out);
        expect(parsed.memory).toMatchObject({ memoryType: "decision", topic: `database choice ${marker}`, scope: "work", project: "atlas" });
        rememberedId = parsed.memory.id;
      });

      it("search finds it with an excerpt and a coverage envelope", async () => {
        const out = searchOutputSchema.parse(structured(await callTool(client, "search", { query: `${marker} database`, limit: 5 })));
        const hit = out.hits.find((x) => x.id === rememberedId);
        expect(hit).toMatchObject({ memoryType: "decision", scope: "work", project: "atlas" });
        expect(hit && "content" in hit ? hit.content : undefined).toContain(marker);
        expect(out.count).toBe(out.hits.length);
        expect(out.coverage.legs.length).toBeGreaterThan(0);
      });

      it("search filters by type and project", async () => {
        const wrongType = searchOutputSchema.parse(structured(await callTool(client, "search", { query: marker, memoryType: "blocker" })));
        expect(wrongType.hits.map((x) => x.id)).not.toContain(rememberedId);
        const wrongProject = searchOutputSchema.parse(structured(await callTool(client, "search", { query: marker, project: "zeus" })));
        expect(wrongProject.hits.map((x) => x.id)).not.toContain(rememberedId);
      });

      it("get_memories returns the full record and lists unknown ids in notFound", async () => {
        const unknown = "0190c0de-0000-7000-8000-00000000dead";
        const out = getMemoriesOutputSchema.parse(structured(await callTool(client, "get_memories", { ids: [rememberedId, unknown] })));
        expect(out.count).toBe(1);
        expect(out.memories[0]).toMatchObject({
          id: rememberedId,
          content: `We chose PostgreSQL with pgvector for ${marker} storage.`,
          status: "active",
          tags: ["infra"],
        });
        expect(Number.isNaN(Date.parse(out.memories[0]!.recordedAt))).toBe(false);
        expect(out.notFound).toEqual([unknown]);
      });

      it("another tenant cannot see it", async () => {
        const got = getMemoriesOutputSchema.parse(structured(await callTool(other, "get_memories", { ids: [rememberedId] })));
        expect(got).toMatchObject({ count: 0, notFound: [rememberedId] });
        const found = searchOutputSchema.parse(structured(await callTool(other, "search", { query: marker })));
        expect(found.hits.map((x) => x.id)).not.toContain(rememberedId);
      });

      it("a read-only key may search but not remember", async () => {
        const denied = await callTool(ro, "remember", { memoryType: "note", topic: "t", content: "should not be stored" });
        expect(errorText(denied)).toBe("insufficient_scope: memory:write required");
        structured(await callTool(ro, "search", { query: marker }));
      });

      it("invalid arguments are an isError result (SEP-1303) that names the field and does not echo content", async () => {
        const secret = `leak${marker}`;
        const tooLong = await invalidArguments(callTool(client, "remember", { memoryType: "note", topic: "t", content: secret + "x".repeat(2001) }));
        expect(tooLong.message).toMatch(/^invalid_input: content: /);
        expect(tooLong.data).toMatchObject({ reason: "invalid_input", field: "content" });
        expect(JSON.stringify(tooLong)).not.toContain(secret);
        // Every problem is named, so the typo'd key shows up next to the key it was meant to be.
        const typo = await invalidArguments(callTool(client, "remember", { memoryType: "note", topic: "t", contnet: "c" }));
        expect(typo.message).toMatch(/\bcontent: .*; contnet: /);
        expect(typo.data).toMatchObject({ field: "content", fields: ["content", "contnet"] });
        const bounds = await invalidArguments(callTool(client, "get_memories", { ids: [rememberedId], maxContentChars: 10 }));
        expect(bounds.data).toMatchObject({ field: "maxContentChars" });
        const both = await invalidArguments(callTool(client, "search", { query: "q", memoryType: "note", memoryTypes: ["fact"] }));
        expect(both.data).toMatchObject({ field: "memoryTypes" });
        // An unknown tool is not a tool's answer: it stays a JSON-RPC -32602 error.
        expect((await invalidParams(callTool(client, "no_such_tool", {}))).message).toMatch(/no_such_tool/);
      });
    });

    describe("MCP over raw HTTP", () => {
      const initialize = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "0" } },
      });
      const mcpHeaders = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };

      it("refuses a missing or unknown key with 401 and a bearer challenge", async () => {
        for (const key of [null, "3ng_not_a_real_key"]) {
          const res = await rest("/mcp", { method: "POST", key, headers: mcpHeaders, body: initialize });
          expect(res.status).toBe(401);
          expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="3ngram"/);
          expect(await res.json()).toMatchObject({ error: "unauthenticated" });
        }
      });

      it("refuses a disallowed Origin with 403 before authentication", async () => {
        for (const key of [null, h.keys.readWrite]) {
          const res = await rest("/mcp", { method: "POST", key, headers: { ...mcpHeaders, Origin: "https://evil.example" }, body: initialize });
          expect(res.status).toBe(403);
          expect(await res.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Origin not allowed" } });
        }
      });

      it("serves an allowlisted Origin", async () => {
        const res = await rest("/mcp", {
          method: "POST",
          headers: { ...mcpHeaders, Origin: h.allowedOrigin, "x-request-id": "mcp-trace-1" },
          body: initialize,
        });
        expect(res.status).toBe(200);
        expect(res.headers.get("x-request-id")).toBe("mcp-trace-1");
        expect(await res.text()).toContain('"protocolVersion":"2025-06-18"');
      });

      it("is not guarded by Host (pods are reached under many names)", async () => {
        // fetch() will not send a custom Host header, so this one goes through node:http.
        const status = await new Promise<number>((resolve, reject) => {
          const req = request(
            `${h.url}/mcp`,
            { method: "POST", headers: { ...mcpHeaders, Host: "gateway.default.svc.cluster.local", Authorization: `Bearer ${h.keys.readWrite}` } },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          req.on("error", reject);
          req.end(initialize);
        });
        expect(status).toBe(200);
      });

      it("serves an official client through the localhost name too", async () => {
        const client = await connect(h.url.replace("127.0.0.1", "localhost"), h.keys.readWrite, ERAS[1]);
        expect((await client.listTools()).tools).toHaveLength(EXPECTED_TOOLS.length);
        await client.close();
      });
    });

    describe("REST", () => {
      let id = "";
      const marker = `rest${randomUUID().slice(0, 8)}`;

      it("POST /api/v1/memories answers 201 with the remember output", async () => {
        const res = await rest("/api/v1/memories", {
          method: "POST",
          json: { memoryType: "commitment", topic: `ship ${marker}`, content: `Ship the ${marker} release on Friday.` },
        });
        expect(res.status).toBe(201);
        const out = rememberOutputSchema.parse(await res.json());
        expect(out.memory).toMatchObject({ memoryType: "commitment", scope: "personal", project: null });
        id = out.memory.id;
      });

      it("GET /api/v1/memories/:id answers the full record", async () => {
        const res = await rest(`/api/v1/memories/${id}`);
        expect(res.status).toBe(200);
        const record = memoryRecordSchema.parse(await res.json());
        expect(record).toMatchObject({ id, content: `Ship the ${marker} release on Friday.`, truncated: false });
      });

      it("GET answers 404 for unknown, malformed and foreign ids alike", async () => {
        for (const [path, key] of [
          ["/api/v1/memories/0190c0de-0000-7000-8000-00000000dead", h.keys.readWrite],
          ["/api/v1/memories/not-a-uuid", h.keys.readWrite],
          [`/api/v1/memories/${id}`, h.keys.otherTenant],
        ] as const) {
          const res = await rest(path, { key });
          expect(res.status, path).toBe(404);
          expect(await res.json()).toMatchObject({ error: "not_found" });
        }
      });

      it("POST /api/v1/search answers the search output", async () => {
        const res = await rest("/api/v1/search", { method: "POST", json: { query: `${marker} release` } });
        expect(res.status).toBe(200);
        const out = searchOutputSchema.parse(await res.json());
        expect(out.hits.map((x) => x.id)).toContain(id);
      });

      it("invalid input is 400 naming the field; unknown keys are rejected", async () => {
        const tooLong = await rest("/api/v1/memories", { method: "POST", json: { memoryType: "note", topic: "t", content: "x".repeat(2001) } });
        expect(tooLong.status).toBe(400);
        expect(await tooLong.json()).toMatchObject({ error: "invalid_input", field: "content" });
        const unknown = await rest("/api/v1/search", { method: "POST", json: { query: "q", lmit: 3 } });
        expect(unknown.status).toBe(400);
        expect(await unknown.json()).toMatchObject({ error: "invalid_input", field: "lmit" });
      });

      it("malformed JSON is 400, an oversized body 413, another media type 415", async () => {
        const malformed = await rest("/api/v1/search", { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"query":' });
        expect(malformed.status).toBe(400);
        expect(await malformed.json()).toMatchObject({ error: "invalid_input", detail: "malformed JSON body" });
        const huge = await rest("/api/v1/memories", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ content: "x".repeat(1_100_000) }),
        });
        expect(huge.status).toBe(413);
        const text = await rest("/api/v1/search", { method: "POST", headers: { "Content-Type": "text/plain" }, body: "query" });
        expect(text.status).toBe(415);
      });

      it("missing or unknown keys are 401 with a challenge; a read-only key cannot write", async () => {
        const none = await rest("/api/v1/search", { method: "POST", key: null, json: { query: "q" } });
        expect(none.status).toBe(401);
        expect(none.headers.get("www-authenticate")).toMatch(/^Bearer realm="3ngram"/);
        const bad = await rest(`/api/v1/memories/${id}`, { key: "3ng_not_a_real_key" });
        expect(bad.status).toBe(401);
        const ro = await rest("/api/v1/memories", { method: "POST", key: h.keys.readOnly, json: { memoryType: "note", topic: "t", content: "c" } });
        expect(ro.status).toBe(403);
        expect(await ro.json()).toMatchObject({ error: "insufficient_scope", detail: "memory:write required" });
      });

      it("echoes a request id, or generates one", async () => {
        const echoed = await rest("/health", { key: null, headers: { "x-request-id": "trace-abc.123" } });
        expect(echoed.headers.get("x-request-id")).toBe("trace-abc.123");
        const generated = await rest("/api/v1/search", { method: "POST", key: null, json: { query: "q" } });
        const requestId = generated.headers.get("x-request-id");
        expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
        expect(await generated.json()).toMatchObject({ request_id: requestId });
        const unsafe = await rest("/health", { key: null, headers: { "x-request-id": "bad id\twith spaces" } });
        expect(unsafe.headers.get("x-request-id")).not.toContain("bad");
      });

      it("unknown routes are 404", async () => {
        const res = await rest("/api/v2/anything", { key: null });
        expect(res.status).toBe(404);
        expect(await res.json()).toMatchObject({ error: "not_found" });
      });
    });

    describe("operations", () => {
      it("/health answers without I/O, /ready checks the peers", async () => {
        const health = await rest("/health", { key: null });
        expect(health.status).toBe(200);
        expect(await health.json()).toEqual({ status: "ok" });
        const ready = await rest("/ready", { key: null });
        expect(ready.status).toBe(200);
        expect(await ready.json()).toMatchObject({ status: "ready", peers: { memory: "SERVING", search: "SERVING" } });
      });

      it("/metrics exposes request and tool counters", async () => {
        // Runs after the MCP and REST groups above, whose calls it counts.
        const res = await rest("/metrics", { key: null });
        expect(res.status).toBe(200);
        const text = await res.text();
        expect(text).toMatch(/threengram_gateway_http_requests_total\{[^}]*route="POST \/api\/v1\/memories"[^}]*status="201"/);
        expect(text).toMatch(/threengram_gateway_mcp_tool_calls_total\{[^}]*tool="remember"[^}]*outcome="ok"/);
        expect(text).toMatch(/threengram_gateway_mcp_tool_calls_total\{[^}]*tool="remember"[^}]*outcome="insufficient_scope"/);
      });
    });

    extra?.(() => h);
  });
}
