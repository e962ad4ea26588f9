/**
 * Facts end to end through a real gateway over the real memory and search services: remember with
 * facts, then get_facts now / asOf / range through the official MCP client, and the same reads
 * over REST (GET /api/v1/facts), including the refusals.
 */
import { randomUUID } from "node:crypto";
import { getFactsOutputSchema, rememberOutputSchema, type FactRecord, type GetFactsOutput } from "@3ngram/schema";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import type { RunningGateway } from "../../src/gateway.js";
import { startTestGateway } from "../support/gateway.js";
import { ERAS, callTool, connect, errorText, invalidArguments, structured } from "../support/mcp-client.js";
import { instantBetween, waitPastOnServer } from "../../../../test/support/clock.js";

type Key = { tenantId: string; userId: string; apiKey: string };

let core: CoreServices;
let gateway: RunningGateway;
let tenantA: Key;
let tenantB: Key;

beforeAll(async () => {
  core = await startCoreServices({ label: "gateway-facts" });
  tenantA = await core.createTenant("facts gateway a");
  tenantB = await core.createTenant("facts gateway b");
  gateway = await startTestGateway({ memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk });
});
afterAll(async () => {
  await gateway?.close();
  await core?.close();
});

const getFacts = async (client: Client, args: Record<string, unknown>): Promise<GetFactsOutput> =>
  getFactsOutputSchema.parse(structured(await callTool(client, "get_facts", args)));

const restFacts = (query: Record<string, string>, key = tenantA.apiKey) =>
  fetch(`${gateway.url}/api/v1/facts?${new URLSearchParams(query).toString()}`, { headers: { Authorization: `Bearer ${key}` } });

const post = (path: string, json: unknown, key = tenantA.apiKey) =>
  fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify(json),
  });

async function count(table: "memories" | "facts", tenantId: string): Promise<number> {
  const { rows } = await core.ownerPool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = $1`, [tenantId]);
  return rows[0]!.n;
}

const ids = (facts: FactRecord[]) => facts.map((f) => f.id);

describe.each(ERAS.slice(0, 2))("MCP, $name", (era) => {
  let client: Client;
  const subject = `lifter:${era.expectedVersion}`;
  const predicate = "deadlift.top_set.weight_kg";
  const generations: FactRecord[] = [];

  beforeAll(async () => {
    client = await connect(gateway.url, tenantA.apiKey, era);
  });
  afterAll(async () => {
    await client?.close();
  });

  it("advertises get_facts as a read-only tool with its output schema", async () => {
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === "get_facts");
    expect(tool).toBeDefined();
    expect(tool!.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: false, destructiveHint: false });
    // Input closed (unknown keys refused), including the nested asOf and range; output open for additive growth.
    const input = tool!.inputSchema as { additionalProperties?: unknown; properties: Record<string, { additionalProperties?: unknown }> };
    expect(input.additionalProperties).toBe(false);
    expect(input.properties.asOf?.additionalProperties).toBe(false);
    expect(input.properties.range?.additionalProperties).toBe(false);
    const output = tool!.outputSchema as { additionalProperties?: unknown; properties: Record<string, { items?: { additionalProperties?: unknown } }> };
    expect(Object.keys(output.properties).sort()).toEqual(["count", "facts"]);
    expect(output.additionalProperties).toBe(true);
    expect(output.properties.facts?.items?.additionalProperties).toBe(true);
    expect(tool!.description).toMatch(/asOf/);
    expect(tool!.description).toMatch(/range/);
    expect(tool!.description).toMatch(/unit/);
  });

  it("remember with facts returns them, and each new value closes the previous one", async () => {
    for (const value of ["140", "150", "155"]) {
      if (generations.length > 0) await waitPastOnServer(core.ownerPool, generations.at(-1)!.recordedAt);
      const out = rememberOutputSchema.parse(
        structured(
          await callTool(client, "remember", {
            memoryType: "fact",
            topic: "deadlift",
            content: `Deadlift top set is now ${value} kg (${randomUUID()})`,
            facts: [{ subject, predicate, value, confidence: 0.9 }],
          }),
        ),
      );
      expect(out.facts).toHaveLength(1);
      const fact = out.facts[0]!;
      expect(fact).toMatchObject({ subject, predicate, value, validTo: null, memoryId: out.memory.id });
      expect(fact.confidence).toBeCloseTo(0.9, 5);
      expect(fact.validFrom).toBe(fact.recordedAt);
      generations.push(fact);
    }
    const now = await getFacts(client, { subject, predicate });
    expect(now.count).toBe(1);
    expect(ids(now.facts)).toEqual([generations[2]!.id]);
  });

  it("asOf.asKnownAt between the writes returns the generation known then, open as it was then", async () => {
    const [g1, g2, g3] = generations as [FactRecord, FactRecord, FactRecord];
    const middle = await getFacts(client, { subject, predicate, asOf: { asKnownAt: instantBetween(g2.recordedAt, g3.recordedAt) } });
    expect(middle.facts.map((f) => [f.id, f.value, f.validTo])).toEqual([[g2.id, "150", null]]);
    const first = await getFacts(client, { subject, predicate, asOf: { asKnownAt: instantBetween(g1.recordedAt, g2.recordedAt) } });
    expect(first.facts.map((f) => [f.id, f.value, f.validTo])).toEqual([[g1.id, "140", null]]);
    // validAt alone uses today's knowledge: the first generation, with the end we now know.
    const validThen = await getFacts(client, { subject, predicate, asOf: { validAt: instantBetween(g1.recordedAt, g2.recordedAt) } });
    expect(validThen.facts.map((f) => [f.id, f.validTo])).toEqual([[g1.id, g2.validFrom]]);
  });

  it("range returns all three generations oldest first, each ending where the next begins", async () => {
    const [g1, g2, g3] = generations as [FactRecord, FactRecord, FactRecord];
    const all = await getFacts(client, { subject, predicate, range: {} });
    expect(all.count).toBe(3);
    expect(all.facts.map((f) => [f.id, f.value, f.validFrom, f.validTo])).toEqual([
      [g1.id, "140", g1.validFrom, g2.validFrom],
      [g2.id, "150", g2.validFrom, g3.validFrom],
      [g3.id, "155", g3.validFrom, null],
    ]);
    const late = await getFacts(client, { subject, predicate, range: { from: instantBetween(g2.recordedAt, g3.recordedAt) } });
    expect(ids(late.facts)).toEqual([g2.id, g3.id]);
  });

  it("refuses asOf with range, naming the field", async () => {
    // Arguments that do not parse are a JSON-RPC -32602 error naming the field (never the value).
    const refusal = async (args: Record<string, unknown>, field: string) => {
      const { message, data } = await invalidArguments(callTool(client, "get_facts", args));
      expect(message).toMatch(new RegExp(`^invalid_input: ${field.replace(".", "\\.")}: `));
      expect(data).toMatchObject({ reason: "invalid_input", field });
      return message;
    };
    expect(await refusal({ subject, asOf: { validAt: "2026-01-01T00:00:00Z" }, range: {} }, "range")).toMatch(/asOf and range cannot be combined/);
    await refusal({ subject, asOf: {} }, "asOf");
    await refusal({ subject, limit: 201 }, "limit");
    await refusal({ subject, range: { from: "2026-01-02T00:00:00Z", to: "2026-01-01T00:00:00Z" } }, "range.to");
  });

  it("refuses a fact older than the open generation and writes nothing from that remember", async () => {
    const memories = await count("memories", tenantA.tenantId);
    const facts = await count("facts", tenantA.tenantId);
    const text = errorText(
      await callTool(client, "remember", {
        memoryType: "fact",
        topic: "deadlift",
        content: `A stale deadlift number ${randomUUID()}`,
        facts: [
          { subject, predicate: "squat.top_set.weight_kg", value: "120" },
          { subject, predicate, value: "130", validFrom: "2020-01-01T00:00:00Z" },
        ],
      }),
    );
    expect(text).toMatch(/^invalid_input: facts\.1\.validFrom/);
    expect(await count("memories", tenantA.tenantId)).toBe(memories);
    expect(await count("facts", tenantA.tenantId)).toBe(facts);
    expect((await getFacts(client, { subject, predicate: "squat.top_set.weight_kg" })).count).toBe(0);
  });

  it("another tenant never sees these facts", async () => {
    const other = await connect(gateway.url, tenantB.apiKey, era);
    try {
      for (const args of [{ subject }, { subject, range: {} }, { subject, asOf: { asKnownAt: new Date().toISOString() } }, {}]) {
        const out = await getFacts(other, args);
        expect(
          out.facts.filter((f) => f.subject === subject),
          JSON.stringify(args),
        ).toEqual([]);
      }
    } finally {
      await other.close();
    }
  });
});

describe("REST", () => {
  const subject = "rest:thermostat";
  const predicate = "setpoint_c";
  const generations: FactRecord[] = [];

  async function facts(query: Record<string, string>, key?: string): Promise<GetFactsOutput> {
    const res = await restFacts(query, key);
    expect(res.status, JSON.stringify(query)).toBe(200);
    return getFactsOutputSchema.parse(await res.json());
  }

  it("POST /api/v1/memories with facts returns them", async () => {
    for (const value of ["19", "20.5", "21"]) {
      if (generations.length > 0) await waitPastOnServer(core.ownerPool, generations.at(-1)!.recordedAt);
      const res = await post("/api/v1/memories", {
        memoryType: "fact",
        topic: "heating",
        content: `Setpoint ${value} C (${randomUUID()})`,
        facts: [{ subject, predicate, value }],
      });
      expect(res.status).toBe(201);
      const out = rememberOutputSchema.parse(await res.json());
      expect(out.facts).toHaveLength(1);
      expect(out.facts[0]).toMatchObject({ subject, predicate, value, validTo: null, confidence: null, memoryId: out.memory.id });
      expect(typeof out.facts[0]!.id).toBe("string");
      generations.push(out.facts[0]!);
    }
  });

  it("GET /api/v1/facts answers now, as of an instant, and over a window", async () => {
    const [g1, g2, g3] = generations as [FactRecord, FactRecord, FactRecord];
    expect(ids((await facts({ subject, predicate })).facts)).toEqual([g3.id]);
    expect(ids((await facts({ subject, asKnownAt: instantBetween(g2.recordedAt, g3.recordedAt) })).facts)).toEqual([g2.id]);
    const first = await facts({ subject, predicate, asKnownAt: instantBetween(g1.recordedAt, g2.recordedAt) });
    expect(first.facts.map((f) => [f.id, f.validTo])).toEqual([[g1.id, null]]);
    expect(ids((await facts({ subject, validAt: instantBetween(g1.recordedAt, g2.recordedAt) })).facts)).toEqual([g1.id]);
    const history = await facts({ subject, predicate, from: "" });
    expect(history.facts.map((f) => [f.id, f.validTo])).toEqual([
      [g1.id, g2.validFrom],
      [g2.id, g3.validFrom],
      [g3.id, null],
    ]);
    expect(ids((await facts({ subject, to: instantBetween(g1.recordedAt, g2.recordedAt) })).facts)).toEqual([g1.id]);
    expect(
      ids((await facts({ subject, from: instantBetween(g2.recordedAt, g3.recordedAt), to: new Date(Date.parse(g3.recordedAt) + 1).toISOString() })).facts),
    ).toEqual([g2.id, g3.id]);
    const limited = await facts({ subject, from: "", limit: "2" });
    expect(limited.count).toBe(2);
    expect(ids(limited.facts)).toEqual([g1.id, g2.id]);
  });

  it("answers exactly what the MCP tool answers for the same question", async () => {
    const [g1, g2] = generations as [FactRecord, FactRecord];
    const client = await connect(gateway.url, tenantA.apiKey, ERAS[1]);
    try {
      const asKnownAt = instantBetween(g1.recordedAt, g2.recordedAt);
      expect(await facts({ subject, asKnownAt })).toEqual(await getFacts(client, { subject, asOf: { asKnownAt } }));
      expect(await facts({ subject, from: "" })).toEqual(await getFacts(client, { subject, range: {} }));
      expect(await facts({ subject })).toEqual(await getFacts(client, { subject }));
    } finally {
      await client.close();
    }
  });

  it("answers 400 naming the parameter for bad queries, including asOf with range", async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ subject, validAt: "2026-01-01T00:00:00Z", from: "2025-01-01T00:00:00Z" }, "from"],
      [{ subject, asKnownAt: "2026-01-01T00:00:00Z", to: "2027-01-01T00:00:00Z" }, "to"],
      [{ subject, validAt: "yesterday" }, "validAt"],
      [{ subject, from: "2026-01-02T00:00:00Z", to: "2026-01-01T00:00:00Z" }, "to"],
      [{ subject, limit: "abc" }, "limit"],
      [{ subject, limit: "0" }, "limit"],
      [{ subject, limit: "201" }, "limit"],
      [{ subject, limit: "2.5" }, "limit"],
      [{ subject: "" }, "subject"],
      [{ subjekt: subject }, "subjekt"],
    ];
    for (const [query, field] of cases) {
      const res = await restFacts(query);
      expect(res.status, JSON.stringify(query)).toBe(400);
      const body = (await res.json()) as { error: string; field?: string; detail?: string };
      expect(body.error).toBe("invalid_input");
      expect(body.field, JSON.stringify(query)).toBe(field);
      expect(body.detail?.startsWith(`${field}: `)).toBe(true);
    }
    const repeated = await fetch(`${gateway.url}/api/v1/facts?subject=a&subject=b`, { headers: { Authorization: `Bearer ${tenantA.apiKey}` } });
    expect(repeated.status).toBe(400);
    expect(((await repeated.json()) as { field?: string }).field).toBe("subject");
  });

  it("refuses a backdated fact over REST and writes nothing", async () => {
    const memories = await count("memories", tenantA.tenantId);
    const factCount = await count("facts", tenantA.tenantId);
    const res = await post("/api/v1/memories", {
      memoryType: "fact",
      topic: "heating",
      content: `Old setpoint ${randomUUID()}`,
      facts: [{ subject, predicate, value: "18", validFrom: "2020-01-01T00:00:00Z" }],
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_input", field: "facts.0.validFrom" });
    expect(await count("memories", tenantA.tenantId)).toBe(memories);
    expect(await count("facts", tenantA.tenantId)).toBe(factCount);
  });

  it("needs a key with the read scope, and shows another tenant nothing", async () => {
    const anonymous = await fetch(`${gateway.url}/api/v1/facts?subject=${subject}`);
    expect(anonymous.status).toBe(401);
    const queries: Record<string, string>[] = [{ subject }, { subject, from: "" }, { subject, asKnownAt: new Date().toISOString() }];
    for (const query of queries) {
      const out = await facts(query, tenantB.apiKey);
      expect(out, JSON.stringify(query)).toEqual({ facts: [], count: 0 });
    }
  });
});
