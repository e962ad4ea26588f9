/**
 * On large tenants a word found in very many memories cannot discriminate, and ranking every row
 * that contains it is what makes the full-text leg slow. The policy leaves such words out of the
 * leg (and requires all words when every one is that common). A tiny cap makes that visible here.
 */
import { SearchService } from "@3ngram/proto/search/v1";
import { bridgeClient, type RpcClient } from "@3ngram/rpc";
import { searchContract } from "@3ngram/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices, type PublicSearchClient } from "../../../../test/support/core-services.js";
import { reader, writer, type TestTenant } from "../../../../test/support/calls.js";

let stack: CoreServices;
let raw: RpcClient<typeof SearchService>;
let search: PublicSearchClient;
let tenant: TestTenant;

beforeAll(async () => {
  stack = await startCoreServices({ label: "lexprune", embedder: null });
  tenant = await stack.createTenant("pruning");
  const memory = await stack.publicMemoryClient();
  for (let i = 0; i < 5; i++)
    await memory.memories.remember({ memoryType: "note", topic: `sighting ${i}`, content: `A kestrel hovered over field ${i}.` }, writer(tenant));
  await memory.memories.remember({ memoryType: "note", topic: "rare pair", content: "A kestrel rode the zephyr at dusk." }, writer(tenant));
  await memory.memories.remember({ memoryType: "note", topic: "wind", content: "The zephyr came from the west." }, writer(tenant));
  raw = await stack.searchClientWithPolicy({ lexicalTermMaxMatches: 3 });
  search = bridgeClient(SearchService, searchContract, raw);
});

afterAll(async () => {
  raw?.close();
  await stack?.close();
});

const ftsCandidates = (response: Awaited<ReturnType<typeof search.search>>) => response.coverage?.legs.find((l) => l.leg === "fts")?.candidates;

describe("full-text leg on common words", () => {
  it("leaves out a word found in more memories than the cap", async () => {
    const response = await search.search({ query: "kestrel zephyr" }, reader(tenant));
    // kestrel is in 6 memories (over the cap of 3), so only zephyr's 2 memories come from the leg.
    expect(ftsCandidates(response)).toBe(2);
    expect(
      response.hits
        .slice(0, 2)
        .map((h) => h.topic)
        .sort(),
    ).toEqual(["rare pair", "wind"]);
  });

  it("requires every word when all of them are common", async () => {
    const response = await search.search({ query: "kestrel" }, reader(tenant));
    expect(ftsCandidates(response)).toBe(6);
  });

  it("finds a word written after a search counted it absent (absent words are never cached)", async () => {
    const before = await search.search({ query: "kestrel osprey" }, reader(tenant));
    expect(before.coverage?.evidence?.termCoverage).toBe(0.5);
    const memory = await stack.publicMemoryClient();
    await memory.memories.remember({ memoryType: "note", topic: "new bird", content: "An osprey dived into the lake." }, writer(tenant));
    const after = await search.search({ query: "kestrel osprey" }, reader(tenant));
    expect(after.coverage?.evidence?.termCoverage).toBe(1);
    expect(after.hits[0]?.topic).toBe("new bird");
  });

  it("keeps counting common words as present for the abstention evidence", async () => {
    const response = await search.search({ query: "kestrel zephyr" }, reader(tenant));
    expect(response.coverage?.evidence?.termCoverage).toBe(1);
  });
});
