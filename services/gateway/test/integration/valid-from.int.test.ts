/**
 * validFrom on remember and revise, end to end: the official MCP client against a real gateway
 * over the real memory and search services (gRPC) and PostgreSQL. A memory that happened in the
 * past is invisible to search before that instant and found after it, and the briefing places it
 * by when it happened, not when it was written; a validFrom too far ahead is refused on MCP and
 * REST alike and stores nothing.
 */
import {
  briefingOutputSchema,
  getMemoriesOutputSchema,
  MAX_VALID_FROM_SKEW_MS,
  rememberOutputSchema,
  reviseOutputSchema,
  searchOutputSchema,
} from "@3ngram/schema";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import type { RunningGateway } from "../../src/gateway.js";
import { startTestGateway } from "../support/gateway.js";
import { ERAS, callTool, connect, errorText, invalidArguments, structured } from "../support/mcp-client.js";

type Key = { tenantId: string; userId: string; apiKey: string };

const DAY_MS = 24 * 60 * 60 * 1000;
/** Whole milliseconds, as the wire carries instants. */
const instant = (ms: number) => new Date(ms).toISOString();

let core: CoreServices;
let gateway: RunningGateway;
let tenant: Key;
let client: Client;

beforeAll(async () => {
  core = await startCoreServices({ label: "gateway-valid-from" });
  tenant = await core.createTenant("valid-from");
  gateway = await startTestGateway({ memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk });
  client = await connect(gateway.url, tenant.apiKey, ERAS[1]);
});
afterAll(async () => {
  await client?.close();
  await gateway?.close();
  await core?.close();
});

const post = (path: string, json: unknown) =>
  fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${tenant.apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify(json),
  });

async function remember(args: Record<string, unknown>): Promise<string> {
  return rememberOutputSchema.parse(structured(await callTool(client, "remember", { scope: "work", ...args }))).memory.id;
}

async function searchIds(args: Record<string, unknown>): Promise<string[]> {
  const out = searchOutputSchema.parse(structured(await callTool(client, "search", { limit: 25, ...args })));
  return out.hits.map((h) => h.id);
}

async function memoryTimes(id: string): Promise<{ validFrom: string; validTo: string | null; recordedAt: string }> {
  const out = getMemoriesOutputSchema.parse(structured(await callTool(client, "get_memories", { ids: [id] })));
  const [m] = out.memories;
  return { validFrom: m!.validFrom, validTo: m!.validTo, recordedAt: m!.recordedAt };
}

describe("validFrom through MCP", () => {
  const happened = Date.now() - 10 * DAY_MS;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    // Written first, with no validFrom: valid from the moment of the write.
    ids.today = await remember({ memoryType: "decision", topic: "release train", content: "Releases leave every Thursday on the release train." });
    // Written second, but decided ten days ago.
    ids.monday = await remember({
      memoryType: "decision",
      topic: "kestrel codename",
      content: "The team chose kestrel as the codename of the new ingest service.",
      validFrom: instant(happened),
    });
  });

  it("records the caller's valid time and the server's recorded time", async () => {
    const monday = await memoryTimes(ids.monday!);
    expect(monday.validFrom).toBe(instant(happened));
    expect(monday.validTo).toBeNull();
    expect(Date.parse(monday.recordedAt)).toBeGreaterThan(Date.now() - 60_000);
    const today = await memoryTimes(ids.today!);
    expect(Date.parse(today.validFrom)).toBeLessThanOrEqual(Date.parse(monday.recordedAt));
  });

  it("search with asOf.validAt before the instant does not find it, after it does", async () => {
    const query = "kestrel codename ingest service";
    expect(await searchIds({ query, asOf: { validAt: instant(happened - DAY_MS) } })).not.toContain(ids.monday);
    expect(await searchIds({ query, asOf: { validAt: instant(happened - 1) } })).not.toContain(ids.monday);
    expect(await searchIds({ query, asOf: { validAt: instant(happened) } })).toContain(ids.monday);
    expect(await searchIds({ query, asOf: { validAt: instant(happened + DAY_MS) } })).toContain(ids.monday);
    expect(await searchIds({ query })).toContain(ids.monday);
  });

  it("the briefing orders it by when it happened, not when it was written", async () => {
    const out = briefingOutputSchema.parse(
      structured(await callTool(client, "briefing", { selector: { kind: "scope", scope: "work" }, sections: ["recentDecisions"], mode: "full" })),
    );
    const order = out.recentDecisions!.items.map((i) => i.id);
    // Newest first: today's decision, then the one made ten days ago (written after it).
    expect(order.indexOf(ids.today!)).toBeGreaterThanOrEqual(0);
    expect(order.indexOf(ids.today!)).toBeLessThan(order.indexOf(ids.monday!));
  });

  it("revise with validFrom ends the predecessor's valid time where the successor's begins", async () => {
    const changed = happened + 2 * DAY_MS;
    const out = reviseOutputSchema.parse(
      structured(
        await callTool(client, "revise", {
          predecessorId: ids.monday,
          edgeIntent: "updates",
          memoryType: "decision",
          topic: "kestrel codename",
          content: "The team renamed the new ingest service from kestrel to osprey.",
          scope: "work",
          validFrom: instant(changed),
        }),
      ),
    );
    const successor = await memoryTimes(out.memory.id);
    expect(successor.validFrom).toBe(instant(changed));
    expect((await memoryTimes(ids.monday!)).validTo).toBe(instant(changed));

    const query = "kestrel osprey ingest service";
    const before = await searchIds({ query, asOf: { validAt: instant(changed - DAY_MS) } });
    expect(before).toContain(ids.monday);
    expect(before).not.toContain(out.memory.id);
    const after = await searchIds({ query, asOf: { validAt: instant(changed + DAY_MS) } });
    expect(after).toContain(out.memory.id);
    expect(after).not.toContain(ids.monday);
  });

  it("refuses a revise whose validFrom precedes the predecessor's, naming validFrom", async () => {
    const res = await callTool(client, "revise", {
      predecessorId: ids.today,
      memoryType: "decision",
      topic: "release train",
      content: "Releases leave every Tuesday on the release train.",
      scope: "work",
      validFrom: instant(Date.now() - 30 * DAY_MS),
    });
    expect(errorText(res)).toMatch(/^invalid_input: validFrom: /);
    expect((await memoryTimes(ids.today!)).validTo).toBeNull();
  });
});

describe("validFrom too far in the future", () => {
  const future = () => instant(Date.now() + MAX_VALID_FROM_SKEW_MS + 60_000);
  const events = async () => searchIds({ order: "chronological", memoryType: "event" });

  it("is refused on MCP (remember and revise) with isError naming the field, storing nothing", async () => {
    const refused = await invalidArguments(
      callTool(client, "remember", { memoryType: "event", topic: "launch", content: "The launch party happens.", validFrom: future() }),
    );
    expect(refused.data.fields).toEqual(["validFrom"]);
    expect(refused.message).toContain("5 minutes");

    const predecessor = await remember({ memoryType: "note", topic: "venue", content: "The launch party is in the atrium." });
    const revised = await invalidArguments(
      callTool(client, "revise", {
        predecessorId: predecessor,
        memoryType: "event",
        topic: "venue",
        content: "The party moved to the roof.",
        validFrom: future(),
      }),
    );
    expect(revised.data.fields).toEqual(["validFrom"]);
    expect((await memoryTimes(predecessor)).validTo).toBeNull();
    expect(await events()).toEqual([]);
  });

  it("is refused over REST with 400 and the path, storing nothing", async () => {
    const res = await post("/api/v1/memories", { memoryType: "event", topic: "launch", content: "The launch party happens tonight.", validFrom: future() });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_input", field: "validFrom" });
    expect(await events()).toEqual([]);
  });

  it("a validFrom within the allowed skew is stored as given", async () => {
    const soon = instant(Date.now() + 60_000);
    const res = await post("/api/v1/memories", { memoryType: "note", topic: "skew", content: "A client clock a minute fast is forgiven.", validFrom: soon });
    expect(res.status).toBe(201);
    const { memory } = (await res.json()) as { memory: { id: string } };
    expect((await memoryTimes(memory.id)).validFrom).toBe(soon);
  });
});
