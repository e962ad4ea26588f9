/**
 * Idempotency keys at the edges: the REST `Idempotency-Key` header and the MCP `idempotencyKey`
 * argument of remember and revise, against a real gateway over the real memory service. A repeat
 * answers with the first write (REST: the same 201 and id), a reused key on another body is 422 /
 * isError `idempotency_key_reused`, and a malformed header is a 400 naming it.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { connectMcp, type McpConnection } from "../../../../test/support/mcp.js";
import type { RunningGateway } from "../../src/gateway.js";
import { startTestGateway } from "../support/gateway.js";

let core: CoreServices;
let gateway: RunningGateway;
let apiKey: string;
let tenantId: string;
let mcp: McpConnection;

beforeAll(async () => {
  core = await startCoreServices({ label: "gateway-idempotency" });
  ({ apiKey, tenantId } = await core.createTenant("idempotency"));
  gateway = await startTestGateway({ memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk });
  mcp = await connectMcp(`${gateway.url}/mcp`, apiKey);
});
afterAll(async () => {
  await mcp?.close();
  await gateway?.close();
  await core?.close();
});

function post(path: string, body: unknown, idempotencyKey?: string): Promise<Response> {
  return fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${apiKey}`,
      "Content-Type": "application/json",
      ...(idempotencyKey !== undefined ? { "Idempotency-Key": idempotencyKey } : {}),
    },
    body: JSON.stringify(body),
  });
}

async function count(content: string): Promise<number> {
  const { rows } = await core.ownerPool.query<{ n: number }>("SELECT count(*)::int AS n FROM memories WHERE tenant_id = $1 AND content = $2", [
    tenantId,
    content,
  ]);
  return rows[0]!.n;
}

interface WriteOut {
  memory: { id: string };
  predecessorId?: string;
}

describe("REST Idempotency-Key", () => {
  it("answers a repeated POST /memories with the same 201 and id; a different body with the key is 422", async () => {
    const key = `"${randomUUID()}"`; // the draft's form: a structured-field String
    const body = { memoryType: "decision", topic: "keys", content: `Retried over REST ${key}.` };
    const first = await post("/api/v1/memories", body, key);
    expect(first.status).toBe(201);
    const firstBody = (await first.json()) as WriteOut;
    const again = await post("/api/v1/memories", body, key);
    expect(again.status).toBe(201);
    expect(((await again.json()) as WriteOut).memory.id).toBe(firstBody.memory.id);
    expect(await count(body.content)).toBe(1);

    const mismatch = await post("/api/v1/memories", { ...body, content: `Something else ${key}.` }, key);
    expect(mismatch.status).toBe(422);
    expect(await mismatch.json()).toMatchObject({ error: "idempotency_key_reused", field: "idempotencyKey" });
    expect(await count(`Something else ${key}.`)).toBe(0);
  });

  it("takes a bare key too, and answers a repeated revise with the first revision", async () => {
    const base = (await (await post("/api/v1/memories", { memoryType: "decision", topic: "db", content: `MySQL ${randomUUID()}` })).json()) as WriteOut;
    const key = randomUUID();
    const body = { memoryType: "decision", topic: "db", content: `PostgreSQL ${key}` };
    const first = await post(`/api/v1/memories/${base.memory.id}/revise`, body, key);
    expect(first.status).toBe(201);
    const firstBody = (await first.json()) as WriteOut;
    const again = await post(`/api/v1/memories/${base.memory.id}/revise`, body, key);
    expect(again.status).toBe(201);
    expect(await again.json()).toMatchObject({ memory: { id: firstBody.memory.id }, predecessorId: base.memory.id });
    // Without the key the same revise is what it always was: a conflict naming the head.
    const unkeyed = await post(`/api/v1/memories/${base.memory.id}/revise`, body);
    expect(unkeyed.status).toBe(409);
  });

  it("refuses a malformed header, or one that disagrees with the body, naming the header", async () => {
    const body = { memoryType: "note", topic: "t", content: `Bad header ${randomUUID()}` };
    const spaced = await post("/api/v1/memories", body, "two words");
    expect(spaced.status).toBe(400);
    expect(await spaced.json()).toMatchObject({ error: "invalid_input", field: "Idempotency-Key" });
    const disagreeing = await post("/api/v1/memories", { ...body, idempotencyKey: "one" }, "other");
    expect(disagreeing.status).toBe(400);
    expect(await disagreeing.json()).toMatchObject({ error: "invalid_input", field: "Idempotency-Key" });
    expect(await count(body.content)).toBe(0);
  });
});

describe("MCP idempotencyKey", () => {
  it("answers a repeated remember with the original id; a different body with the key is an isError naming the reason", async () => {
    const idempotencyKey = randomUUID();
    const args = { memoryType: "preference", topic: "keys", content: `Retried over MCP ${idempotencyKey}.`, idempotencyKey };
    const first = await mcp.call<WriteOut>("remember", args);
    const again = await mcp.call<WriteOut>("remember", args);
    expect(again.memory.id).toBe(first.memory.id);
    expect(await count(args.content)).toBe(1);
    const text = await mcp.callError("remember", { ...args, content: `Another MCP body ${idempotencyKey}.` });
    expect(text).toMatch(/^idempotency_key_reused: /);
  });

  it("answers a repeated revise with the first revision", async () => {
    const base = await mcp.call<WriteOut>("remember", { memoryType: "decision", topic: "cache", content: `Memcached ${randomUUID()}` });
    const args = { predecessorId: base.memory.id, memoryType: "decision", topic: "cache", content: `Redis ${randomUUID()}`, idempotencyKey: randomUUID() };
    const first = await mcp.call<WriteOut>("revise", args);
    const again = await mcp.call<WriteOut>("revise", args);
    expect(again).toMatchObject({ memory: { id: first.memory.id }, predecessorId: base.memory.id });
  });
});
