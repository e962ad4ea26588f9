/**
 * Traces across the services: one process-wide OpenTelemetry provider with an in-memory exporter,
 * a real gateway in front of the real memory and search services (loopback gRPC, PostgreSQL) and a
 * real consolidator on BullMQ/Redis. Checks that one MCP search is one trace through gateway,
 * memory and search, that a caller's own traceparent is continued, that a queued job continues the
 * trace of the request that queued it, and that log lines carry the trace id.
 */
import { randomUUID } from "node:crypto";
import { PassThrough } from "node:stream";
import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-node";
import { createLogger, loadConfig, startTracing, type Tracing } from "@3ngram/runtime";
import { consolidatorConfigSchema, startConsolidator, type Consolidator } from "@3ngram/consolidator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { TEST_REDIS_URL } from "../../../../test/support/database.js";
import { eventually } from "../../../../test/support/processes.js";
import { startGateway, type RunningGateway } from "../../src/gateway.js";
import { testConfig } from "../support/gateway.js";
import { ERAS, callTool, connect, structured } from "../support/mcp-client.js";

const exporter = new InMemorySpanExporter();
const lines: string[] = [];
let tracing: Tracing;
let core: CoreServices;
let gateway: RunningGateway;
let consolidator: Consolidator;

beforeAll(async () => {
  // Registered before anything builds a client or server, as each main.ts does.
  tracing = startTracing({ serviceName: "tracing-test", exporter });
  core = await startCoreServices({ label: "gateway-tracing" });
  const sink = new PassThrough();
  sink.on("data", (chunk: Buffer) => lines.push(...chunk.toString("utf8").split("\n").filter(Boolean)));
  gateway = await startGateway(
    testConfig({ memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk }, { LOG_LEVEL: "info" }),
    {
      log: createLogger({ service: "gateway", level: "info", destination: sink }),
    },
  );
  consolidator = await startConsolidator(
    loadConfig(consolidatorConfigSchema, {
      SERVICE_SIGNING_JWK: core.keys.signingJwk,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: core.redisPrefix,
      MEMORY_ADDR: core.memoryAddress,
      SEARCH_ADDR: core.searchAddress,
      METRICS_PORT: "0",
      EMBEDDINGS_PROVIDER: "hashing",
      EMBEDDINGS_DIMENSIONS: "512",
    }),
    { log: createLogger({ service: "consolidator", level: "silent" }) },
  );
});

afterAll(async () => {
  await consolidator?.close();
  await gateway?.close();
  await core?.close();
  await tracing?.shutdown();
});

const spansOf = (traceId: string) => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
const server = (spans: ReadableSpan[], rpc: string) => spans.filter((s) => s.kind === SpanKind.SERVER && s.name === rpc);
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

/** The names of a span's ancestors, nearest first, as far as the trace holds them. */
function ancestry(span: ReadableSpan, spans: ReadableSpan[]): string[] {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const names: string[] = [];
  for (let at = byId.get(parentOf(span) ?? ""); at !== undefined; at = byId.get(parentOf(at) ?? "")) names.push(at.name);
  return names;
}

/** A tools/call as a 2026-07-28 client sends it: one self-contained request, no session before it. */
async function modernToolCall(apiKey: string, name: string, args: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await fetch(`${gateway.url}/mcp`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${apiKey}`,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": "2026-07-28",
      "Mcp-Method": "tools/call",
      "Mcp-Name": name,
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name,
        arguments: args,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "tracing-test", version: "1.0.0" },
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { result?: { isError?: boolean; structuredContent?: Record<string, unknown> } };
  expect(body.result?.isError, JSON.stringify(body)).toBeFalsy();
  return { requestId: res.headers.get("x-request-id")!, result: body.result! };
}

describe("tracing", () => {
  it("one MCP search is one trace through gateway, memory and search", async () => {
    const tenant = await core.createTenant("tracing search");
    exporter.reset();
    // A fresh key, so this very request resolves it through memory before searching.
    const { requestId } = await modernToolCall(tenant.apiKey, "search", { query: "anything at all" });
    const http = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.SERVER && s.name === "POST /mcp");
    expect(http).toBeDefined();
    const spans = spansOf(http!.spanContext().traceId);
    const [resolve] = server(spans, "memory.v1.ApiKeysService/ResolveApiKey");
    const [search] = server(spans, "search.v1.SearchService/Search");
    expect(resolve, "memory's span is in the trace").toBeDefined();
    expect(search, "search's span is in the trace").toBeDefined();
    expect(http!.attributes["http.route"]).toBe("/mcp");
    expect(search!.attributes).toMatchObject({
      "rpc.system": "grpc",
      "rpc.service": "search.v1.SearchService",
      "rpc.method": "Search",
      "rpc.grpc.status_code": 0,
    });
    // Each server span hangs off the gateway's client span for it, under the request (and, for the search, the tool call).
    expect(ancestry(search!, spans)).toEqual(["search.v1.SearchService/Search", "tools/call search", "POST /mcp"]);
    expect(ancestry(resolve!, spans)).toEqual(["memory.v1.ApiKeysService/ResolveApiKey", "POST /mcp"]);
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    // The gateway's log lines for this request carry the trace id.
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.request_id === requestId);
    expect(logged.some((l) => l.msg === "tool call" && l.trace_id === http!.spanContext().traceId && typeof l.span_id === "string")).toBe(true);
  });

  it("continues the trace an agent sends in traceparent, across its whole session", async () => {
    const tenant = await core.createTenant("tracing client");
    const traceId = randomUUID().replaceAll("-", "");
    const parentSpan = "00f067aa0ba902b7";
    exporter.reset();
    const client = await connect(gateway.url, tenant.apiKey, ERAS[1], { traceparent: `00-${traceId}-${parentSpan}-01` });
    try {
      structured(await callTool(client, "search", { query: "release plan" }));
    } finally {
      await client.close();
    }
    const spans = spansOf(traceId);
    const https = spans.filter((s) => s.kind === SpanKind.SERVER && s.name === "POST /mcp");
    expect(https.length).toBeGreaterThanOrEqual(2); // server/discover, then tools/call
    for (const s of https) expect(parentOf(s)).toBe(parentSpan);
    expect(server(spans, "memory.v1.ApiKeysService/ResolveApiKey")).toHaveLength(1);
    expect(server(spans, "search.v1.SearchService/Search")).toHaveLength(1);
  });

  it("a queued job continues the trace of the request that queued it", async () => {
    const tenant = await core.createTenant("tracing queue");
    exporter.reset();
    const { result } = await modernToolCall(tenant.apiKey, "remember", {
      memoryType: "fact",
      topic: "squat",
      content: `Back squat top set 100 kg ${randomUUID()}`,
    });
    const memoryId = (result.structuredContent as { memory: { id: string } }).memory.id;
    const http = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.SERVER && s.name === "POST /mcp")!;
    const traceId = http.spanContext().traceId;
    // The consolidator's extraction job hands its fact proposal back to memory, inside the same trace.
    // The consumer span ends once the job handler returns, a moment after its last RPC.
    await eventually(() => {
      expect(server(spansOf(traceId), "memory.v1.ProposalsService/CreateFactProposals")).toHaveLength(1);
      expect(spansOf(traceId).filter((s) => s.kind === SpanKind.CONSUMER && s.name === "process extraction")).toHaveLength(1);
    }, 20_000);
    const [proposed] = server(spansOf(traceId), "memory.v1.ProposalsService/CreateFactProposals");
    const spans = spansOf(traceId);
    const consumer = spans.find((s) => s.kind === SpanKind.CONSUMER && s.name === "process extraction");
    const producer = spans.find((s) => s.kind === SpanKind.PRODUCER && s.name === "send extraction");
    expect(producer).toBeDefined();
    expect(consumer?.attributes["messaging.message.type"]).toBe("extract-facts");
    expect(parentOf(consumer!)).toBe(producer!.spanContext().spanId);
    expect(ancestry(producer!, spans)).toContain("memory.v1.MemoriesService/Remember");
    expect(ancestry(proposed!, spans)).toEqual(
      expect.arrayContaining(["process extraction", "send extraction", "memory.v1.MemoriesService/Remember", "POST /mcp"]),
    );
    expect(memoryId).toMatch(/^[0-9a-f-]{36}$/);
  });
});
