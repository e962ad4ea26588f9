/**
 * review_proposals end to end through a real gateway over the real memory and search services:
 * the MCP tool from the official client in every protocol era, the REST routes, the list shape
 * (factProposals only when there are some), the edge and fact answer variants, the scopes, and
 * another tenant's ids. Proposals are handed over the way the consolidator does it (internal gRPC).
 */
import { randomUUID } from "node:crypto";
import { createTenantWithKey, type CreatedTenant } from "@3ngram/memory";
import { SCOPES, type CallOptions } from "@3ngram/rpc";
import { getFactsOutputSchema, getMemoriesOutputSchema, reviewProposalsOutputSchema, type ReviewProposalsOutput } from "@3ngram/schema";
import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { writer } from "../../../../test/support/calls.js";
import type { RunningGateway } from "../../src/gateway.js";
import { startTestGateway } from "../support/gateway.js";
import { ERAS, callTool, connect, errorText, invalidArguments, structured } from "../support/mcp-client.js";

type Tenant = { tenantId: string; userId: string; apiKey: string };

const UNKNOWN = "0190c0de-0000-7000-8000-00000000beef";

let core: CoreServices;
let gateway: RunningGateway;
let tenantA: Tenant;
let tenantB: Tenant;
let readOnly: CreatedTenant;

const asConsolidator = (t: { tenantId: string }): CallOptions => ({ identity: { tenantId: t.tenantId, scopes: [SCOPES.internalConsolidate] } });

beforeAll(async () => {
  core = await startCoreServices({ label: "gateway-proposals" });
  tenantA = await core.createTenant("proposals gateway a");
  tenantB = await core.createTenant("proposals gateway b");
  readOnly = await createTenantWithKey(core.ownerPool, { tenantName: "proposals read-only", scopes: [SCOPES.read] });
  gateway = await startTestGateway({ memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk });
});
afterAll(async () => {
  await gateway?.close();
  await core?.close();
});

/** Two memories in a tenant and an edge proposal between them; returns the ids. */
async function edgeProposal(t: { tenantId: string; userId: string }, edgeType: "extends" | "updates" | "supersedes" = "supersedes") {
  const memory = await core.publicMemoryClient();
  const remember = async (label: string) =>
    (await memory.memories.remember({ memoryType: "decision", topic: `topic ${label}`, content: `${label} ${randomUUID()}` }, writer(t))).memory!.id;
  const older = await remember("older");
  const newer = await remember("newer");
  const created = await memory.proposals.createConsolidationProposals(
    { proposals: [{ fromId: newer, toId: older, edgeType, similarity: 0.95, rationale: "cosine 0.950 >= near-duplicate threshold 0.92" }] },
    asConsolidator(t),
  );
  return { older, newer, id: created.createdIds[0]! };
}

/** A memory and a fact proposal read from it; returns the ids. */
async function factProposal(t: { tenantId: string; userId: string }, value = "98") {
  const memory = await core.publicMemoryClient();
  const subject = `lift_${randomUUID().slice(0, 8)}`;
  const memoryId = (await memory.memories.remember({ memoryType: "fact", topic: "lift", content: `Top set ${value} kg ${randomUUID()}` }, writer(t))).memory!
    .id;
  const created = await memory.proposals.createFactProposals(
    { memoryId, extractor: "rules/1", facts: [{ subject, predicate: "top_set.weight_kg", value, confidence: 0.8, rationale: "rule:measure(kg)" }] },
    asConsolidator(t),
  );
  return { memoryId, subject, id: created.createdIds[0]! };
}

const review = async (client: Client, args: Record<string, unknown>): Promise<ReviewProposalsOutput> =>
  reviewProposalsOutputSchema.parse(structured(await callTool(client, "review_proposals", args)));

const rest = (path: string, init: { method?: string; key?: string; json?: unknown; body?: string; type?: string } = {}) =>
  fetch(`${gateway.url}${path}`, {
    method: init.method ?? "GET",
    headers: {
      Authorization: `Bearer ${init.key ?? tenantA.apiKey}`,
      ...(init.json !== undefined || init.type ? { "Content-Type": init.type ?? "application/json" } : {}),
    },
    ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : init.body !== undefined ? { body: init.body } : {}),
  });

describe("review_proposals over MCP", () => {
  it("is advertised as one flat closed object with the append hints", async () => {
    const client = await connect(gateway.url, tenantA.apiKey, ERAS[1]);
    try {
      const tool = (await client.listTools()).tools.find((t) => t.name === "review_proposals")!;
      expect(tool.annotations).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false });
      // One flat, closed object (model APIs refuse a composed root): action is an enum, the rest optional.
      const input = tool.inputSchema as { type: string; properties: Record<string, { enum?: string[] }>; required: string[]; additionalProperties: unknown };
      expect(input).not.toHaveProperty("oneOf");
      expect(input).toMatchObject({ type: "object", required: ["action"], additionalProperties: false });
      expect(input.properties.action?.enum?.sort()).toEqual(["accept", "list", "reject"]);
      expect(Object.keys(input.properties).sort()).toEqual(["action", "limit", "proposalId", "rationale", "status"]);
      expect(tool.description).toMatch(/factProposals/);
    } finally {
      await client.close();
    }
  });

  it("lists edge proposals alone with no factProposals key, then both kinds", async () => {
    const tenant = await core.createTenant("proposals listing");
    const client = await connect(gateway.url, tenant.apiKey, ERAS[0]);
    try {
      expect(await review(client, { action: "list" })).toEqual({ action: "list", proposals: [], count: 0 });
      const edge = await edgeProposal(tenant);
      const edgesOnly = await review(client, { action: "list" });
      expect(Object.keys(edgesOnly).sort()).toEqual(["action", "count", "proposals"]);
      expect(edgesOnly.proposals).toEqual([
        expect.objectContaining({
          id: edge.id,
          fromId: edge.newer,
          toId: edge.older,
          edgeType: "supersedes",
          memoryType: "decision",
          fromTopic: "topic newer",
          toTopic: "topic older",
          similarity: 0.95,
          rationale: "cosine 0.950 >= near-duplicate threshold 0.92",
          status: "proposed",
          decidedAt: null,
          decisionRationale: null,
        }),
      ]);
      const fact = await factProposal(tenant);
      const both = await review(client, { action: "list", limit: 10 });
      expect(both.count).toBe(1);
      expect(both.factProposals).toEqual([
        expect.objectContaining({
          id: fact.id,
          memoryId: fact.memoryId,
          subject: fact.subject,
          predicate: "top_set.weight_kg",
          value: "98",
          extractor: "rules/1",
          status: "proposed",
          factId: null,
        }),
      ]);
      expect(await review(client, { action: "list", status: "rejected" })).toEqual({ action: "list", proposals: [], count: 0 });
    } finally {
      await client.close();
    }
  });

  it.each(ERAS)("accepts and rejects both kinds, each answering its own variant ($name)", async (era) => {
    const client = await connect(gateway.url, tenantA.apiKey, era);
    try {
      const edge = await edgeProposal(tenantA);
      const applied = await review(client, { action: "accept", proposalId: edge.id });
      expect(applied).toMatchObject({ action: "applied", proposal: { id: edge.id, status: "applied", edgeType: "supersedes" } });
      const read = getMemoriesOutputSchema.parse(structured(await callTool(client, "get_memories", { ids: [edge.older] })));
      expect(read.memories[0]).toMatchObject({ supersededBy: edge.newer });
      expect(read.memories[0]!.validTo).not.toBeNull();

      const fact = await factProposal(tenantA);
      const appliedFact = await review(client, { action: "accept", proposalId: fact.id });
      expect(appliedFact).toMatchObject({ action: "applied_fact", proposal: { id: fact.id, status: "applied", memoryId: fact.memoryId } });
      const facts = getFactsOutputSchema.parse(structured(await callTool(client, "get_facts", { subject: fact.subject })));
      expect(facts.facts.map((f) => `${f.predicate} = ${f.value}`)).toEqual(["top_set.weight_kg = 98"]);
      expect(facts.facts[0]!.id).toBe((appliedFact.proposal as { factId: string }).factId);

      const otherEdge = await edgeProposal(tenantA, "extends");
      expect(await review(client, { action: "reject", proposalId: otherEdge.id })).toMatchObject({
        action: "rejected",
        proposal: { id: otherEdge.id, status: "rejected", decisionRationale: null },
      });
      const otherFact = await factProposal(tenantA, "97");
      expect(await review(client, { action: "reject", proposalId: otherFact.id, rationale: "misread the log" })).toMatchObject({
        action: "rejected_fact",
        proposal: { id: otherFact.id, status: "rejected", decisionRationale: "misread the log" },
      });
      expect(errorText(await callTool(client, "review_proposals", { action: "accept", proposalId: otherFact.id }))).toMatch(
        /^conflict: proposal .* is already rejected/,
      );
    } finally {
      await client.close();
    }
  });

  it("lets a read-only key list but not decide, and refuses bad input naming the field", async () => {
    const client = await connect(gateway.url, readOnly.apiKey, ERAS[1]);
    try {
      expect((await review(client, { action: "list" })).action).toBe("list");
      const denied = await callTool(client, "review_proposals", { action: "accept", proposalId: UNKNOWN });
      expect(errorText(denied)).toBe("insufficient_scope: memory:write required");
      expect(errorText(await callTool(client, "review_proposals", { action: "reject", proposalId: UNKNOWN }))).toBe(
        "insufficient_scope: memory:write required",
      );
      const refused = async (args: Record<string, unknown>) => (await invalidArguments(callTool(client, "review_proposals", args))).data?.field;
      expect(await refused({ action: "list", limit: 101 })).toBe("limit");
      expect(await refused({ action: "list", status: "pending" })).toBe("status");
      expect(await refused({ action: "accept", proposalId: "not-a-uuid" })).toBe("proposalId");
      expect(await refused({ action: "reject", proposalId: UNKNOWN, rationale: "x".repeat(2001) })).toBe("rationale");
      expect(await refused({ action: "approve", proposalId: UNKNOWN })).toBe("action");
      expect(await refused({ action: "accept" })).toBe("proposalId");
      expect(await refused({ action: "list", proposalId: UNKNOWN })).toBe("proposalId");
    } finally {
      await client.close();
    }
  });

  it("answers another tenant's proposal exactly like an unknown one, and leaves it open", async () => {
    const theirs = await edgeProposal(tenantA, "extends");
    const client = await connect(gateway.url, tenantB.apiKey, ERAS[1]);
    try {
      for (const action of ["accept", "reject"]) {
        const foreign = errorText(await callTool(client, "review_proposals", { action, proposalId: theirs.id }));
        const unknown = errorText(await callTool(client, "review_proposals", { action, proposalId: UNKNOWN }));
        expect(foreign).toMatch(/^not_found: /);
        expect(foreign.replaceAll(theirs.id, "ID").replace(/request \S+/g, "")).toBe(unknown.replaceAll(UNKNOWN, "ID").replace(/request \S+/g, ""));
      }
      expect((await review(client, { action: "list", limit: 100 })).proposals!.map((p) => p.id)).not.toContain(theirs.id);
    } finally {
      await client.close();
    }
    const owner = await connect(gateway.url, tenantA.apiKey, ERAS[1]);
    try {
      const listed = await review(owner, { action: "list", limit: 100 });
      expect(listed.proposals!.find((p) => p.id === theirs.id)?.status).toBe("proposed");
    } finally {
      await owner.close();
    }
  });
});

describe("review_proposals over REST", () => {
  it("GET /api/v1/proposals lists like the tool, validating status and limit", async () => {
    const tenant = await core.createTenant("proposals rest listing");
    const edge = await edgeProposal(tenant);
    const listed = await rest("/api/v1/proposals?limit=5", { key: tenant.apiKey });
    expect(listed.status).toBe(200);
    const body = reviewProposalsOutputSchema.parse(await listed.json());
    expect(body).toMatchObject({ action: "list", count: 1, proposals: [{ id: edge.id }] });
    expect(body.factProposals).toBeUndefined();
    for (const [query, field] of [
      ["?limit=0", "limit"],
      ["?limit=lots", "limit"],
      ["?status=pending", "status"],
      ["?sort=new", "sort"],
    ] as const) {
      const res = await rest(`/api/v1/proposals${query}`, { key: tenant.apiKey });
      expect(res.status, query).toBe(400);
      expect(await res.json()).toMatchObject({ error: "invalid_input", field });
    }
    const applied = await rest("/api/v1/proposals?status=applied", { key: tenant.apiKey });
    expect(await applied.json()).toEqual({ action: "list", proposals: [], count: 0 });
  });

  it("POST …/apply and …/reject decide, with the reviewer's reason stored", async () => {
    const edge = await edgeProposal(tenantA);
    const applied = await rest(`/api/v1/proposals/${edge.id}/apply`, { method: "POST" });
    expect(applied.status).toBe(200);
    expect(await applied.json()).toMatchObject({ action: "applied", proposal: { id: edge.id, status: "applied" } });
    const again = await rest(`/api/v1/proposals/${edge.id}/apply`, { method: "POST" });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: "conflict" });

    const fact = await factProposal(tenantA, "101");
    const rejected = await rest(`/api/v1/proposals/${fact.id}/reject`, { method: "POST", json: { rationale: "that was a warm-up set" } });
    expect(rejected.status).toBe(200);
    expect(await rejected.json()).toMatchObject({ action: "rejected_fact", proposal: { id: fact.id, decisionRationale: "that was a warm-up set" } });
    const bare = await factProposal(tenantA, "102");
    const noBody = await rest(`/api/v1/proposals/${bare.id}/reject`, { method: "POST" });
    expect(await noBody.json()).toMatchObject({ action: "rejected_fact", proposal: { decisionRationale: null } });
    const appliedFact = await factProposal(tenantA, "103");
    expect(await (await rest(`/api/v1/proposals/${appliedFact.id}/apply`, { method: "POST" })).json()).toMatchObject({ action: "applied_fact" });
  });

  it("refuses bad bodies naming the field, other media types, and a read-only key", async () => {
    const fact = await factProposal(tenantA);
    const long = await rest(`/api/v1/proposals/${fact.id}/reject`, { method: "POST", json: { rationale: "x".repeat(2001) } });
    expect(long.status).toBe(400);
    expect(await long.json()).toMatchObject({ error: "invalid_input", field: "rationale" });
    const unknownKey = await rest(`/api/v1/proposals/${fact.id}/reject`, { method: "POST", json: { reason: "no" } });
    expect(await unknownKey.json()).toMatchObject({ error: "invalid_input", field: "reason" });
    const text = await rest(`/api/v1/proposals/${fact.id}/reject`, { method: "POST", body: "because", type: "text/plain" });
    expect(text.status).toBe(415);
    const ro = await rest(`/api/v1/proposals/${fact.id}/apply`, { method: "POST", key: readOnly.apiKey });
    expect(ro.status).toBe(403);
    expect(await ro.json()).toMatchObject({ error: "insufficient_scope", detail: "memory:write required" });
    expect((await rest("/api/v1/proposals", { key: readOnly.apiKey })).status).toBe(200);
    // Nothing was decided by any of these.
    const listed = reviewProposalsOutputSchema.parse(await (await rest("/api/v1/proposals?limit=100")).json());
    expect(listed.factProposals!.find((f) => f.id === fact.id)?.status).toBe("proposed");
  });

  it("answers malformed, unknown and foreign ids alike: 404", async () => {
    const theirs = await edgeProposal(tenantA, "extends");
    const bodies: unknown[] = [];
    for (const [id, key] of [
      [theirs.id, tenantB.apiKey],
      [UNKNOWN, tenantB.apiKey],
    ] as const) {
      for (const action of ["apply", "reject"]) {
        const res = await rest(`/api/v1/proposals/${id}/${action}`, { method: "POST", key });
        expect(res.status, `${action} ${id}`).toBe(404);
        const body = (await res.json()) as Record<string, unknown>;
        bodies.push(JSON.stringify({ ...body, request_id: undefined }).replaceAll(id, "ID"));
      }
    }
    expect(bodies.slice(0, 2)).toEqual(bodies.slice(2));
    const malformed = await rest("/api/v1/proposals/not-an-id/apply", { method: "POST" });
    expect(malformed.status).toBe(404);
    expect(await malformed.json()).toMatchObject({ error: "not_found" });
  });
});
