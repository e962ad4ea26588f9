import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CredentialSigner, createRpcClient, generateServiceKeyPair, SCOPES } from "@3ngram/rpc";
import { SearchService } from "@3ngram/proto/search/v1";
import { AppError } from "@3ngram/errors";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { fullHits } from "../../../../test/support/search.js";

let stack: CoreServices;
let withVectors: CoreServices;
let tenantA: { tenantId: string; userId: string };
let tenantB: { tenantId: string; userId: string };

const as = (t: { tenantId: string; userId: string }) => ({ identity: { tenantId: t.tenantId, userId: t.userId, scopes: [SCOPES.read, SCOPES.write] } });

const CORPUS = [
  { memoryType: "decision", topic: "database choice", content: "We chose PostgreSQL with pgvector as the primary database for memories." },
  { memoryType: "preference", topic: "code style", content: "The user prefers tabs over spaces and short functions." },
  { memoryType: "blocker", topic: "deploy", content: "The staging deploy is blocked on an expired TLS certificate.", project: "infra" },
  { memoryType: "fact", topic: "Alice", content: "Alice leads the payments team and works from Lisbon." },
  { memoryType: "note", topic: "lunch", content: "Friday lunch moved to the Thai place on the corner." },
] as const;

beforeAll(async () => {
  // No embedder: every memory is stored pending and search runs on full-text and recency only.
  stack = await startCoreServices({ label: "searchfts", embedder: null });
  withVectors = await startCoreServices({ label: "searchvec" });
  for (const s of [stack, withVectors]) {
    const a = await s.createTenant("a");
    const b = await s.createTenant("b");
    const memory = await s.publicMemoryClient();
    for (const m of CORPUS) await memory.memories.remember(m, as(a));
    await memory.memories.remember({ memoryType: "decision", topic: "database choice", content: "Tenant B picked MySQL for its own database." }, as(b));
    if (s === withVectors) {
      tenantA = a;
      tenantB = b;
    } else {
      ftsTenant = a;
    }
  }
});
let ftsTenant: { tenantId: string; userId: string };

afterAll(async () => {
  await stack?.close();
  await withVectors?.close();
});

describe("fused search", () => {
  it("ranks the matching memory first and reports its coverage", async () => {
    const search = await withVectors.publicSearchClient();
    const result = await search.search({ query: "primary database for memories", limit: 3 }, as(tenantA));
    expect(result.hits[0]?.topic).toBe("database choice");
    expect(fullHits(result)[0]?.content).toContain("PostgreSQL");
    expect(result.hits.length).toBe(3);
    expect(result.hasMore).toBe(true);
    const legs = Object.fromEntries(result.coverage!.legs.map((l) => [l.leg, l]));
    expect(legs.vector).toMatchObject({ available: true });
    expect(legs.vector!.candidates).toBeGreaterThan(0);
    expect(legs.fts!.candidates).toBeGreaterThan(0);
    // The ranked pool is every distinct candidate the legs found: here the whole (small) corpus.
    expect(result.coverage!.poolSize).toBe(CORPUS.length);
    expect(result.coverage!.abstained).toBe(false);
  });

  it("never returns another tenant's memories", async () => {
    const search = await withVectors.publicSearchClient();
    const asA = await search.search({ query: "MySQL database", limit: 25 }, as(tenantA));
    expect(fullHits(asA).every((h) => !h.content.includes("MySQL"))).toBe(true);
    const asB = await search.search({ query: "PostgreSQL pgvector", limit: 25 }, as(tenantB));
    expect(fullHits(asB).map((h) => h.content)).toEqual(["Tenant B picked MySQL for its own database."]);
  });

  it("narrows by type and project before ranking", async () => {
    const search = await withVectors.publicSearchClient();
    const blockers = await search.search({ query: "deploy certificate", memoryTypes: ["blocker"] }, as(tenantA));
    expect(blockers.hits.map((h) => h.memoryType)).toEqual(["blocker"]);
    const infra = await search.search({ query: "anything at all", projects: ["infra"] }, as(tenantA));
    expect(fullHits(infra).map((h) => h.project)).toEqual(["infra"]);
  });

  it("gives short name queries the topic bonus", async () => {
    const search = await withVectors.publicSearchClient();
    const result = await search.search({ query: "alice" }, as(tenantA));
    expect(result.hits[0]?.topic).toBe("Alice");
  });

  it("still answers from full text when no vector is available, and says so", async () => {
    const search = await stack.publicSearchClient();
    const result = await search.search({ query: "TLS certificate" }, as(ftsTenant));
    expect(result.hits[0]?.topic).toBe("deploy");
    const vector = result.coverage!.legs.find((l) => l.leg === "vector");
    expect(vector).toMatchObject({ available: false, candidates: 0 });
  });

  it("rejects invalid filters naming the field", async () => {
    const search = await withVectors.publicSearchClient();
    const err = await search.search({ query: "x", limit: 26 }, as(tenantA)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).details.field).toBe("limit");
    const empty = await search.search({ query: "   " }, as(tenantA)).catch((e: unknown) => e);
    expect((empty as AppError).details.field).toBe("query");
  });

  it("refuses calls with a forged credential", async () => {
    const pair = await generateServiceKeyPair();
    const forged = createRpcClient(SearchService, {
      address: withVectors.searchAddress,
      audience: "search",
      signer: await CredentialSigner.fromJwk("gateway", pair.privateJwk),
    });
    const err = await forged.search({ query: "x" }, as(tenantA)).catch((e: unknown) => e);
    expect((err as AppError).reason).toBe("unauthenticated");
    forged.close();
  });

  it("refuses a caller without memory:read", async () => {
    const search = await withVectors.publicSearchClient();
    const err = await search.search({ query: "x" }, { identity: { tenantId: tenantA.tenantId, scopes: [SCOPES.write] } }).catch((e: unknown) => e);
    expect((err as AppError).reason).toBe("insufficient_scope");
  });
});
