/**
 * Search honours the scope registry: a scope filter naming a registered scope or any of its aliases
 * matches memories stored under the name or any alias, in every candidate leg.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCOPES } from "@3ngram/rpc";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { fullHits } from "../../../../test/support/search.js";

let stack: CoreServices;
type Tenant = { tenantId: string; userId: string };
let tenantA: Tenant;
let tenantB: Tenant;
const ids: Record<string, string> = {};

const as = (t: Tenant) => ({ identity: { tenantId: t.tenantId, userId: t.userId, scopes: [SCOPES.read, SCOPES.write] } });

beforeAll(async () => {
  stack = await startCoreServices({ label: "searchscopes" });
  tenantA = await stack.createTenant("a");
  tenantB = await stack.createTenant("b");
  const memory = await stack.publicMemoryClient();
  const remember = async (key: string, t: Tenant, scope: string, content: string) => {
    const out = await memory.memories.remember({ memoryType: "note", topic: "deployment pipeline", content, scope }, as(t));
    ids[key] = out.memory!.id;
    return out.memory!;
  };
  // Stored under "eng" while no scope claimed that name.
  expect((await remember("early", tenantA, "eng", "The deployment pipeline runs on every merge.")).scope).toBe("eng");
  await memory.scopes.createScope({ name: "engineering", aliases: ["eng", "dev"] }, as(tenantA));
  // Written to aliases after the registry knows them: stored under the canonical name.
  expect((await remember("viaAlias", tenantA, "dev", "The deployment pipeline deploys to staging first.")).scope).toBe("engineering");
  expect((await remember("canonical", tenantA, "engineering", "The deployment pipeline needs two approvals.")).scope).toBe("engineering");
  await remember("otherScope", tenantA, "work", "The deployment pipeline dashboard is on the wall screen.");
  await remember("personal", tenantA, "personal", "My own deployment pipeline for the blog is a shell script.");
  // Another tenant stores under the text "eng" and has no such alias.
  await remember("tenantB", tenantB, "eng", "Tenant B has its own deployment pipeline.");
});
afterAll(async () => {
  await stack?.close();
});

describe("search scope filter with aliases", () => {
  it("matches the canonical name and every alias, in every leg", async () => {
    const search = await stack.publicSearchClient();
    const expected = [ids.early, ids.viaAlias, ids.canonical].sort();
    for (const scope of ["engineering", "eng", "dev"]) {
      const result = await search.search({ query: "deployment pipeline", scope, limit: 10 }, as(tenantA));
      expect(result.hits.map((h) => h.id).sort(), scope).toEqual(expected);
      expect(new Set(fullHits(result).map((h) => h.scope))).toEqual(new Set(["eng", "engineering"]));
      // Each leg saw exactly the three eligible memories: the predicate is the same in all of them.
      for (const leg of result.coverage!.legs) {
        expect(leg.available, `${scope} ${leg.leg}`).toBe(true);
        expect(leg.candidates, `${scope} ${leg.leg}`).toBe(3);
      }
    }
  });

  it("leaves other scopes and unregistered names alone", async () => {
    const search = await stack.publicSearchClient();
    const work = await search.search({ query: "deployment pipeline", scope: "work" }, as(tenantA));
    expect(work.hits.map((h) => h.id)).toEqual([ids.otherScope]);
    const unknown = await search.search({ query: "deployment pipeline", scope: "nowhere" }, as(tenantA));
    expect(unknown.hits).toEqual([]);
    const all = await search.search({ query: "deployment pipeline", limit: 10 }, as(tenantA));
    expect(all.hits).toHaveLength(5);
  });

  it("resolves through the caller's own registry only", async () => {
    const search = await stack.publicSearchClient();
    // B has no "engineering" scope and its "eng" is plain text.
    const eng = await search.search({ query: "deployment pipeline", scope: "eng" }, as(tenantB));
    expect(eng.hits.map((h) => h.id)).toEqual([ids.tenantB]);
    const engineering = await search.search({ query: "deployment pipeline", scope: "engineering" }, as(tenantB));
    expect(engineering.hits).toEqual([]);
  });
});
