/**
 * Paging and the query path against the real memory and search services: chronological listing,
 * relevance and keyset cursors walked while other writes land between pages, cursors refused for
 * another search, the vector leg failing, and the query-embedding cache (observed through an
 * embedder that counts its calls and through the service's metrics registry).
 */
import { SearchOrder, SearchService } from "@3ngram/proto/search/v1";
import { HashingEmbedder, type EmbedOptions, type Embedder } from "@3ngram/embeddings";
import { bridgeClient, createRpcClient, type RpcClient } from "@3ngram/rpc";
import { searchContract, type MemoryType, type SearchOutput } from "@3ngram/schema";
import { createLogger } from "@3ngram/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSearchConfig, startSearchService, type RunningSearchService } from "../../src/index.js";
import { rejection, writer } from "../../../../test/support/calls.js";
import { startCoreServices, type CoreServices, type PublicMemoryClient, type PublicSearchClient } from "../../../../test/support/core-services.js";
import { fullHits } from "../../../../test/support/search.js";

type Tenant = { tenantId: string; userId: string };
type SearchClient = PublicSearchClient;
type SearchArgs = Parameters<SearchClient["search"]>[0];

/** The test embedder, counting the texts it is asked to embed. */
class CountingEmbedder implements Embedder {
  readonly inner = new HashingEmbedder({ dimensions: 512 });
  readonly model = this.inner.model;
  readonly dimensions = this.inner.dimensions;
  readonly texts: string[] = [];
  embed(texts: readonly string[], options?: EmbedOptions): Promise<number[][]> {
    this.texts.push(...texts);
    return this.inner.embed(texts, options);
  }
  callsFor(text: string): number {
    return this.texts.filter((t) => t === text).length;
  }
}

/** A query model that is down: every call fails. */
class FailingEmbedder implements Embedder {
  readonly model = "hashing-512";
  readonly dimensions = 512;
  calls = 0;
  async embed(): Promise<number[][]> {
    this.calls += 1;
    throw new Error("model unavailable");
  }
}

let core: CoreServices;
let memory: PublicMemoryClient;
const extra: Array<{ service: RunningSearchService; raw: RpcClient<typeof SearchService> }> = [];

beforeAll(async () => {
  core = await startCoreServices({ label: "searchpaging" });
  memory = await core.publicMemoryClient();
});
afterAll(async () => {
  for (const e of extra) {
    e.raw.close();
    await e.service.close();
  }
  await core?.close();
});

/** Another search service over the same database, with its own query embedder and metrics. */
async function searchServiceWith(embedder: Embedder | null): Promise<{ service: RunningSearchService; client: SearchClient }> {
  const config = loadSearchConfig({
    DATABASE_URL: core.db.url,
    SERVICE_TRUSTED_JWKS: core.keys.trustedJwks,
    GRPC_HOST: "127.0.0.1",
    GRPC_PORT: "0",
    METRICS_PORT: "0",
    EMBEDDINGS_PROVIDER: "hashing",
    LOG_LEVEL: "silent",
  });
  const service = await startSearchService(config, { embedder, log: createLogger({ service: "test", level: "silent" }) });
  const raw = createRpcClient(SearchService, { address: service.address, audience: "search", signer: await core.keys.signer("gateway") });
  extra.push({ service, raw });
  return { service, client: bridgeClient(SearchService, searchContract, raw) };
}

const ids = (r: SearchOutput) => r.hits.map((h) => h.id);

async function remember(t: Tenant, fields: { topic: string; content: string; project?: string; memoryType?: MemoryType }): Promise<string> {
  const out = await memory.memories.remember({ memoryType: "note", ...fields }, writer(t));
  return out.memory!.id;
}

/** Walks every page of a search, calling `between` after each page but the last. */
async function walk(client: SearchClient, t: Tenant, args: SearchArgs, between: (page: number) => Promise<void> = async () => {}): Promise<SearchOutput[]> {
  const pages: SearchOutput[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await client.search({ ...args, ...(cursor !== undefined ? { cursor } : {}) }, writer(t));
    pages.push(page);
    expect(page.hasMore).toBe(page.nextCursor !== undefined);
    expect(page.coverage!.hasMore).toBe(page.hasMore);
    if (!page.nextCursor) return pages;
    expect(pages.length).toBeLessThan(100);
    await between(pages.length);
    cursor = page.nextCursor;
  }
}

describe("chronological order", () => {
  let t: Tenant;
  let client: SearchClient;
  let embedder: CountingEmbedder;
  const listed: string[] = [];

  beforeAll(async () => {
    embedder = new CountingEmbedder();
    client = (await searchServiceWith(embedder)).client;
    t = await core.createTenant("chronological");
    for (let i = 0; i < 7; i++) listed.unshift(await remember(t, { topic: `garden log ${i}`, content: `Watered the tomatoes, day ${i}.`, project: "garden" }));
    await remember(t, { topic: "elsewhere", content: "Bought new tomato stakes at the market.", project: "errands" });
  });

  it("lists every match newest first without embedding, query optional with a filter", async () => {
    const before = embedder.texts.length;
    const pages = await walk(client, t, { order: "chronological", projects: ["garden"], limit: 3 });
    expect(pages.map((p) => p.hits.length)).toEqual([3, 3, 1]);
    expect(pages.flatMap(ids)).toEqual(listed);
    expect(embedder.texts.length).toBe(before);
    const first = pages[0]!;
    expect(first.coverage!.order).toBe("chronological");
    expect(first.coverage!.legs).toEqual([]);
    expect(first.coverage!.poolSize).toBeNull();
    expect(first.coverage!.abstained).toBe(false);
    const times = pages.flatMap((p) => fullHits(p).map((h) => Date.parse(h.recordedAt)));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it("narrows to full-text matches when a query is given", async () => {
    const result = await client.search({ order: "chronological", query: "tomato stakes", limit: 25 }, writer(t));
    expect(result.hits.map((h) => h.topic)).toEqual(["elsewhere"]);
  });

  it("reports an empty listing as abstained", async () => {
    const result = await client.search({ order: "chronological", projects: ["nothing-here"] }, writer(t));
    expect(result.hits).toEqual([]);
    expect(result.coverage!.abstained).toBe(true);
  });

  it("refuses a listing with neither a query nor a filter, and relevance order without a query", async () => {
    const unfiltered = await rejection(client.search({ order: "chronological" }, writer(t)));
    expect(unfiltered.reason).toBe("invalid_input");
    expect(unfiltered.details.field).toBe("query");
    const noQuery = await rejection(client.search({ memoryTypes: ["note"] }, writer(t)));
    expect(noQuery.details.field).toBe("query");
    // An order no enum value names can only come from a foreign client: an unknown number.
    const raw = await core.searchClient();
    const badOrder = await rejection(raw.search({ query: "x", order: 99 as SearchOrder }, writer(t)));
    expect(badOrder.details.field).toBe("order");
  });

  it("walks exactly the rows present when it started while new ones are written between pages", async () => {
    const u = await core.createTenant("chronological-walk");
    const initial: string[] = [];
    for (let i = 0; i < 10; i++) initial.unshift(await remember(u, { topic: `walk ${i}`, content: `Walk entry ${i}.`, project: "walk" }));
    const written: string[] = [];
    // A writer racing the walk, plus one deterministic write between every two pages.
    let racing = true;
    const racer = (async () => {
      for (let i = 0; racing && i < 200; i++) written.push(await remember(u, { topic: `race ${i}`, content: `Racing entry ${i}.`, project: "walk" }));
    })();
    const pages = await walk(client, u, { order: "chronological", projects: ["walk"], limit: 3 }, async (n) => {
      written.push(await remember(u, { topic: `between ${n}`, content: `Written between pages, ${n}.`, project: "walk" }));
    });
    racing = false;
    await racer;
    const seen = pages.flatMap(ids);
    expect(new Set(seen).size).toBe(seen.length);
    expect(written.length).toBeGreaterThan(pages.length - 1);
    // Rows written during the walk are newer than every cursor position, so they never enter it.
    const fromWalk = seen.filter((id) => !written.includes(id));
    expect(fromWalk).toEqual(initial);
    // Only rows the race committed before page 1 read can appear, and only ahead of the initial ones.
    expect(seen.slice(seen.length - initial.length)).toEqual(initial);
    // A new walk sees them.
    const fresh = await walk(client, u, { order: "chronological", projects: ["walk"], limit: 25 });
    expect(fresh.flatMap(ids).sort()).toEqual([...initial, ...written].sort());
  });
});

describe("relevance cursors", () => {
  let t: Tenant;
  let client: SearchClient;
  let embedder: CountingEmbedder;
  const corpus: string[] = [];

  beforeAll(async () => {
    embedder = new CountingEmbedder();
    client = (await searchServiceWith(embedder)).client;
    t = await core.createTenant("relevance-cursor");
    for (let i = 0; i < 23; i++) corpus.push(await remember(t, { topic: `lighthouse ${i}`, content: `The lighthouse keeper logged entry ${i}.` }));
  });

  it("walks the frozen pool exactly once while new matches are written, without re-embedding", async () => {
    const query = "lighthouse keeper entry";
    const raced: string[] = [];
    const betweenPages: string[] = [];
    let racing = true;
    const racer = (async () => {
      for (let i = 0; racing && i < 200; i++)
        raced.push(await remember(t, { topic: `lighthouse race ${i}`, content: `The lighthouse keeper logged a racing entry ${i}.` }));
    })();
    const pages = await walk(client, t, { query, limit: 5 }, async (n) => {
      betweenPages.push(await remember(t, { topic: `lighthouse new ${n}`, content: `The lighthouse keeper logged a new entry ${n}.` }));
    });
    racing = false;
    await racer;
    const seen = pages.flatMap(ids);
    const pool = pages[0]!.coverage!.poolSize!;
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBe(pool);
    // Every memory stored before page 1 is in the pool (the corpus is under the per-leg floor);
    // only racing writes that committed before page 1 may join it, and writes after page 1 never do.
    for (const id of corpus) expect(seen).toContain(id);
    expect(seen.every((id) => corpus.includes(id) || raced.includes(id))).toBe(true);
    expect(betweenPages.length).toBe(pages.length - 1);
    expect(seen.some((id) => betweenPages.includes(id))).toBe(false);
    expect(pages.length).toBe(Math.ceil(pool / 5));
    // Frozen scores: every page continues the order of page 1.
    const scores = pages.flatMap((p) => p.hits.map((h) => h.score));
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    // Page 1 embedded the query once; the continuations did not.
    expect(embedder.callsFor(query)).toBe(1);
    // Every page reports page 1's coverage.
    for (const page of pages) {
      expect(page.coverage!.legs).toEqual(pages[0]!.coverage!.legs);
      expect(page.coverage!.poolSize).toBe(pool);
      expect(page.coverage!.evidence).toEqual(pages[0]!.coverage!.evidence);
    }
  });

  it("skips rows that became ineligible, never duplicating or skipping the rest", async () => {
    const u = await core.createTenant("relevance-archive");
    const all: string[] = [];
    for (let i = 0; i < 12; i++) all.push(await remember(u, { topic: `harbour ${i}`, content: `The harbour master noted tide ${i}.` }));
    const first = await client.search({ query: "harbour master tide", limit: 4 }, writer(u));
    const shown = ids(first);
    const later = all.filter((id) => !shown.includes(id));
    const gone = later.slice(0, 3);
    for (const id of gone) await memory.memories.archive({ memoryId: id }, writer(u));
    const rest = await walk(client, u, { query: "harbour master tide", limit: 4, cursor: first.nextCursor! });
    const seen = [...shown, ...rest.flatMap(ids)];
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.sort()).toEqual(all.filter((id) => !gone.includes(id)).sort());
  });

  it("lets the page size change between pages", async () => {
    const first = await client.search({ query: "lighthouse keeper", limit: 3 }, writer(t));
    const second = await client.search({ query: "lighthouse keeper", limit: 7, cursor: first.nextCursor! }, writer(t));
    expect(second.hits).toHaveLength(7);
    expect(ids(second).some((id) => ids(first).includes(id))).toBe(false);
  });

  it("serves a compact projection on any page", async () => {
    const first = await client.search({ query: "lighthouse keeper", limit: 2, projection: "compact" }, writer(t));
    // A compact hit carries id, type, topic and score only.
    expect(first.hits.every((h) => !("content" in h) && !("scope" in h) && !("recordedAt" in h) && h.topic !== "")).toBe(true);
    const second = await client.search({ query: "lighthouse keeper", limit: 2, cursor: first.nextCursor! }, writer(t));
    expect(fullHits(second).every((h) => h.content.includes("lighthouse"))).toBe(true);
  });

  it("refuses a cursor issued for another query, filters, order or tenant", async () => {
    const first = await client.search({ query: "lighthouse keeper", limit: 2 }, writer(t));
    const cursor = first.nextCursor!;
    const cases: SearchArgs[] = [
      { query: "lighthouse keeper logged", limit: 2, cursor },
      { query: "lighthouse keeper", limit: 2, memoryTypes: ["note"], cursor },
      { query: "lighthouse keeper", limit: 2, projects: ["harbour"], cursor },
      { query: "lighthouse keeper", limit: 2, order: "chronological", cursor },
    ];
    for (const args of cases) {
      const err = await rejection(client.search(args, writer(t)));
      expect(err.reason).toBe("invalid_input");
      expect(err.details.field).toBe("cursor");
      expect(err.message).toContain("cursor was issued for a different query");
      expect(err.message).not.toContain("lighthouse");
    }
    const other = await core.createTenant("cursor-thief");
    const stolen = await rejection(client.search({ query: "lighthouse keeper", limit: 2, cursor }, writer(other)));
    expect(stolen.message).toContain("cursor was issued for a different query");
    // Whitespace is not a different query.
    const same = await client.search({ query: "  lighthouse   keeper ", limit: 2, cursor }, writer(t));
    expect(same.hits).toHaveLength(2);
  });

  it("refuses a garbled cursor", async () => {
    const first = await client.search({ query: "lighthouse keeper", limit: 2 }, writer(t));
    for (const cursor of [first.nextCursor!.slice(0, 20), "garbage!", `${first.nextCursor!}x`]) {
      const err = await rejection(client.search({ query: "lighthouse keeper", limit: 2, cursor }, writer(t)));
      expect(err.reason).toBe("invalid_input");
      expect(err.details.field).toBe("cursor");
    }
  });
});

describe("vector leg unavailable", () => {
  it("answers from full text and recency when the query model fails, and says so", async () => {
    const failing = new FailingEmbedder();
    const { client } = await searchServiceWith(failing);
    const t = await core.createTenant("failing-model");
    const target = await remember(t, { topic: "boiler service", content: "The boiler service is booked with the plumber on the fourth." });
    await remember(t, { topic: "groceries", content: "Oat milk, lemons and rice." });
    const result = await client.search({ query: "boiler plumber" }, writer(t));
    expect(failing.calls).toBeGreaterThan(0);
    expect(result.hits[0]!.id).toBe(target);
    const legs = Object.fromEntries(result.coverage!.legs.map((l) => [l.leg, l]));
    expect(legs.vector).toMatchObject({ available: false, candidates: 0 });
    expect(legs.fts).toMatchObject({ available: true, candidates: 1 });
    expect(legs.recency).toMatchObject({ available: true, candidates: 2 });
    expect(result.coverage!.evidence!.bestCosine).toBeNull();
    expect(result.coverage!.evidence!.anyLexical).toBe(true);
    expect(result.coverage!.abstained).toBe(false);
    // A failure is not cached: the next identical query asks the model again.
    const calls = failing.calls;
    await client.search({ query: "boiler plumber" }, writer(t));
    expect(failing.calls).toBe(calls + 1);
  });

  it("answers the same way with no model configured", async () => {
    const { client } = await searchServiceWith(null);
    const t = await core.createTenant("no-model");
    const target = await remember(t, { topic: "passport", content: "Passport renewal appointment is on the twelfth." });
    const result = await client.search({ query: "passport renewal" }, writer(t));
    expect(ids(result)).toEqual([target]);
    expect(result.coverage!.legs.find((l) => l.leg === "vector")).toMatchObject({ available: false });
  });
});

describe("query-embedding cache", () => {
  it("serves a repeated query without calling the model, and counts hits and misses", async () => {
    const embedder = new CountingEmbedder();
    const { client, service } = await searchServiceWith(embedder);
    const t = await core.createTenant("cache");
    await remember(t, { topic: "wifi password", content: "The guest wifi password is on the fridge." });
    const counts = async () => {
      const metric = await service.registry.getSingleMetric("threengram_search_query_embedding_cache_total")!.get();
      const by = (outcome: string) => metric.values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
      return { hit: by("hit"), miss: by("miss") };
    };
    const first = await client.search({ query: "guest wifi password" }, writer(t));
    expect(embedder.callsFor("guest wifi password")).toBe(1);
    expect(await counts()).toEqual({ hit: 0, miss: 1 });
    const second = await client.search({ query: "guest wifi password" }, writer(t));
    // Normalised: the same words with other spacing are the same query.
    await client.search({ query: "  guest   wifi password " }, writer(t));
    expect(embedder.callsFor("guest wifi password")).toBe(1);
    expect(await counts()).toEqual({ hit: 2, miss: 1 });
    expect(ids(second)).toEqual(ids(first));
    expect(second.coverage!.legs.find((l) => l.leg === "vector")).toMatchObject({ available: true });
    await client.search({ query: "fridge" }, writer(t));
    expect(embedder.callsFor("fridge")).toBe(1);
    expect(await counts()).toEqual({ hit: 2, miss: 2 });
  });
});
