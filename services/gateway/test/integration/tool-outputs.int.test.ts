/**
 * Every tool's answer, as the gateway sends it, is exactly what its advertised outputSchema
 * describes (support/output-check.ts, whose own test shows it fails on wrong answers): the
 * structured content parses strictly (an unknown key, a wrong type or a missing field fails), and
 * parsing it changes nothing, so the text mirror is byte for byte the JSON of the parsed value,
 * keys in the schema's order. Each tool is called in the shapes its output can take (search's
 * full, compact and chronological hits; briefing's brief, full and since answers;
 * configure_scope's results).
 *
 * The gateway does not parse outputs (ADR-0029, 0040): the bridge reads each answer from the
 * wire with its keys in the schema's order, and this is the test that fails if an answer drifts
 * from its schema or its order. Last, concurrent requests of every kind (a tools/call's server
 * carries only the called tool; the others carry everything) each get their own answer.
 */
import { randomUUID } from "node:crypto";
import { createLogger } from "@3ngram/runtime";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { startGateway, type RunningGateway } from "../../src/gateway.js";
import { TOOL_NAMES, type ToolName } from "../../src/mcp/catalog.js";
import { TOOLS } from "../../src/mcp/server.js";
import { testConfig } from "../support/gateway.js";
import { ERAS, callTool, connect, structured } from "../support/mcp-client.js";
import { outputProblems } from "../support/output-check.js";

let core: CoreServices;
let gateway: RunningGateway;
let client: Client;
let apiKey = "";
const called = new Set<ToolName>();
const marker = `outputs${randomUUID().slice(0, 8)}`;

const log = createLogger({ service: "gateway", level: process.env.TEST_LOG_LEVEL ?? "silent" });

beforeAll(async () => {
  core = await startCoreServices({ label: "gateway-tool-outputs" });
  gateway = await startGateway(testConfig({ memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk }), { log });
  const tenant = await core.createTenant("tool outputs");
  apiKey = tenant.apiKey;
  client = await connect(gateway.url, apiKey, ERAS[0]);
});

afterAll(async () => {
  await client?.close();
  await gateway?.close();
  await core?.close();
});

/** Calls a tool, checks its answer against the advertised schema, and returns the structured content. */
async function checkedCall(name: ToolName, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await callTool(client, name, args);
  const tool = TOOLS.find((t) => t.name === name)!;
  expect(outputProblems(tool.outputSchema, result), `${name} ${JSON.stringify(args)}`).toEqual([]);
  called.add(name);
  return structured(result);
}

describe("every tool's output matches its advertised outputSchema", () => {
  let decisionId = "";
  let commitmentId = "";

  beforeAll(async () => {
    const stored = async (args: Record<string, unknown>) => (structured(await callTool(client, "remember", args)).memory as { id: string }).id;
    decisionId = await stored({
      memoryType: "decision",
      topic: `database choice ${marker}`,
      content: `We chose PostgreSQL for ${marker}; the bench measured 120 ms at p99.`,
      scope: "work",
      project: "atlas",
      tags: ["infra"],
      facts: [{ subject: `atlas ${marker}`, predicate: "latency_p99_ms", value: "120", confidence: 0.9 }],
    });
    commitmentId = await stored({
      memoryType: "commitment",
      topic: `migration ${marker}`,
      content: `Ana migrates the ${marker} tables by Friday.`,
      dueAt: "2030-01-04T17:00:00.000Z",
      owner: "ana",
    });
  });

  it("remember and revise", async () => {
    await checkedCall("remember", {
      memoryType: "decision",
      topic: `cache choice ${marker}`,
      content: `We cache ${marker} query embeddings; hit rate 0.8.`,
      scope: "work",
      tags: ["infra"],
      facts: [{ subject: `cache ${marker}`, predicate: "hit_rate", value: "0.8" }],
    });
    await checkedCall("remember", { memoryType: "note", topic: `plain note ${marker}`, content: `A note about ${marker}.` });
    await checkedCall("revise", {
      predecessorId: decisionId,
      memoryType: "decision",
      topic: `database choice ${marker}`,
      content: `We chose PostgreSQL with pgvector for ${marker}.`,
      scope: "work",
      project: "atlas",
    });
  });

  it("search, in every projection and order", async () => {
    await checkedCall("search", { query: `${marker} database` });
    await checkedCall("search", { query: `${marker} database`, projection: "compact", limit: 2 });
    await checkedCall("search", { order: "chronological", scope: "work", limit: 1 });
    await checkedCall("search", { query: `${marker}`, asOf: { validAt: new Date().toISOString() }, status: "archived" });
    await checkedCall("search", { query: "nothing at all matches this zzzqqq" });
  });

  it("get_memories and get_facts", async () => {
    await checkedCall("get_memories", { ids: [decisionId, commitmentId, "0190c0de-0000-7000-8000-00000000dead"] });
    await checkedCall("get_facts", { subject: `atlas ${marker}` });
  });

  it("resolve", async () => {
    await checkedCall("resolve", { memoryId: commitmentId, status: "resolved" });
  });

  it("briefing and handoff", async () => {
    const brief = await checkedCall("briefing", { selector: { kind: "all" } });
    await checkedCall("briefing", { selector: { kind: "scope", scope: "work" }, mode: "full" });
    await checkedCall("briefing", { selector: { kind: "all" }, since: brief.changesCursor });
    await checkedCall("handoff", { selector: { kind: "all" } });
  });

  it("configure_scope, review_proposals and describe_environment", async () => {
    await checkedCall("configure_scope", { action: "create", name: `s-${marker.toLowerCase()}` });
    await checkedCall("configure_scope", { action: "list" });
    await checkedCall("configure_scope", { action: "set_retrieval_default", mode: "off" });
    await checkedCall("configure_scope", { action: "delete", name: `s-${marker.toLowerCase()}` });
    await checkedCall("review_proposals", { action: "list" });
    await checkedCall("describe_environment", {});
  });

  it.each([ERAS[0], ERAS[1]])("answers concurrent requests of every kind, each from its own server ($name)", async (era) => {
    const concurrent = await connect(gateway.url, apiKey, era);
    try {
      const [found, got, facts, listed, prompt, completed, unknown] = await Promise.all([
        callTool(concurrent, "search", { query: `${marker} database`, projection: "compact" }),
        callTool(concurrent, "get_memories", { ids: [commitmentId] }),
        callTool(concurrent, "get_facts", { subject: `atlas ${marker}` }),
        concurrent.listTools(),
        concurrent.getPrompt({ name: "debrief", arguments: { scope: "work" } }),
        concurrent.complete({ ref: { type: "ref/prompt", name: "debrief" }, argument: { name: "scope", value: "wo" } }),
        callTool(concurrent, "no_such_tool", {}).then(
          () => undefined,
          (err: { code?: number; message?: string }) => err,
        ),
      ]);
      const hits = structured(found).hits as { id: string }[];
      expect(hits.length).toBeGreaterThan(0);
      expect(hits.every((h) => Object.keys(h).length === 4)).toBe(true);
      expect((structured(got).memories as { id: string }[]).map((m) => m.id)).toEqual([commitmentId]);
      expect((structured(facts).facts as unknown[]).length).toBeGreaterThan(0);
      expect(listed.tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
      expect((prompt.messages[0]?.content as { text: string }).text).toContain('scope "work"');
      expect(completed.completion.values).toContain("work");
      expect(unknown).toMatchObject({ code: -32602, message: expect.stringContaining("Tool no_such_tool not found") });
    } finally {
      await concurrent.close();
    }
  });

  it("covered every tool", () => {
    expect([...called].sort()).toEqual([...TOOL_NAMES].sort());
  });
});
