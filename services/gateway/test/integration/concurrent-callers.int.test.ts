/**
 * Many callers at once through one gateway: the /mcp path keeps no state between requests that
 * one caller could see from another's (each request gets its own server, its own Request and its
 * own context; the rate-limit layers are counted together). Several tenants, both protocol eras,
 * writes, searches and listings all in flight together: every answer carries its own caller's
 * data and no one else's.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { connectMcp, type McpConnection } from "../../../../test/support/mcp.js";
import type { RunningGateway } from "../../src/gateway.js";
import { startTestGateway } from "../support/gateway.js";

const TENANTS = 6;
const CALLS_PER_CLIENT = 8;

interface Caller {
  marker: string;
  /** The memory stored for it at the start, which get_memories reads back. */
  memoryId: string;
  clients: McpConnection[];
}

let core: CoreServices;
let gateway: RunningGateway;
const callers: Caller[] = [];

beforeAll(async () => {
  core = await startCoreServices({ label: "concurrent-callers" });
  gateway = await startTestGateway({ memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk });
  for (let i = 0; i < TENANTS; i++) {
    const tenant = await core.createTenant(`concurrent ${i}`);
    // One client per protocol era: 2025-11-25 (initialize) and 2026-07-28 (server/discover).
    const clients = [await connectMcp(`${gateway.url}/mcp`, tenant.apiKey), await connectMcp(`${gateway.url}/mcp`, tenant.apiKey, { modern: true })];
    // A word no other tenant's text contains, so any answer naming another caller's marker is a leak.
    const marker = `marker${i}x${randomUUID().slice(0, 8)}`;
    const stored = await clients[0]!.call<{ memory: { id: string } }>("remember", {
      memoryType: "note",
      topic: `${marker} topic`,
      content: `Only tenant ${i} knows ${marker}.`,
    });
    callers.push({ marker, memoryId: stored.memory.id, clients });
  }
}, 120_000);

afterAll(async () => {
  for (const caller of callers) for (const client of caller.clients) await client.close();
  await gateway?.close();
  await core?.close();
});

/** One call of a rotating mix: a search for the caller's own marker, a read by id, a write, the tool list. */
async function oneCall(caller: Caller, client: McpConnection, era: number, n: number): Promise<unknown> {
  switch (n % 4) {
    case 0:
      return client.call("search", { query: caller.marker, limit: 5 });
    case 1:
      return client.call("get_memories", { ids: [caller.memoryId] });
    case 2:
      return client.call("remember", {
        memoryType: "note",
        topic: `${caller.marker} call ${era}.${n}`,
        content: `Tenant note ${n} from client ${era} about ${caller.marker}.`,
      });
    default:
      return client.client.listTools();
  }
}

describe("concurrent callers through one gateway", () => {
  it("answers every caller with its own data only, with all tenants and both eras in flight at once", async () => {
    const calls = callers.flatMap((caller, who) =>
      caller.clients.flatMap((client, era) =>
        Array.from({ length: CALLS_PER_CLIENT }, async (_, n) => ({ who, n, answer: JSON.stringify(await oneCall(caller, client, era, n)) })),
      ),
    );
    const answers = await Promise.all(calls);
    expect(answers).toHaveLength(TENANTS * 2 * CALLS_PER_CLIENT);
    for (const { who, n, answer } of answers) {
      for (const [other, { marker }] of callers.entries()) {
        if (other !== who) expect(answer, `caller ${who}, call ${n}`).not.toContain(marker);
      }
      // Searches, reads and writes all name the caller's own marker; the tool list names none.
      if (n % 4 !== 3) expect(answer, `caller ${who}, call ${n}`).toContain(callers[who]!.marker);
    }
  });
});
