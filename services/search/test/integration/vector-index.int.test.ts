/**
 * The in-process vector index against real writes: it nominates what an exact scan in PostgreSQL
 * ranks nearest (up to int8 rounding), it sees every memory written, re-embedded or erased after it loaded before the
 * next search reads, it holds one tenant's vectors only, a leg its filters leave short goes back to
 * the database's index, a tenant beyond its bound is never held, and a search service configured
 * with it answers from it.
 */
import { createPool, fromVectorBinary, vectorParam, withTenant, type Pool } from "@3ngram/db";
import { HashingEmbedder } from "@3ngram/embeddings";
import { SearchService } from "@3ngram/proto/search/v1";
import { SCOPES, type CallOptions, type RpcClient } from "@3ngram/rpc";
import { createLogger } from "@3ngram/runtime";
import { HNSW_FILTERED_SCAN, SEARCH_POLICY, gatherCandidates, type RunningSearchService } from "@3ngram/search";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadExactScan } from "../../src/in-process/exact-scan.js";
import { VectorIndex } from "../../src/in-process/vector-index.js";
import { selectChangedSince, type VectorSet } from "../../src/db/stored-vectors.js";
import { startCoreServices, type CoreServices, type PublicMemoryClient } from "../../../../test/support/core-services.js";

const ROLE = "threengram_search";
const embedder = new HashingEmbedder({ dimensions: 512 });
const log = createLogger({ service: "test", level: "silent" });
let stack: CoreServices;
let memory: PublicMemoryClient;
let searchPool: Pool;
let tenantA: { tenantId: string; userId: string };
let tenantB: { tenantId: string; userId: string };
const notes: string[] = [];
const decisions: string[] = [];

const writer = (t: { tenantId: string; userId: string }): CallOptions => ({
  identity: { tenantId: t.tenantId, userId: t.userId, scopes: [SCOPES.read, SCOPES.write] },
});
const eraser = (t: { tenantId: string; userId: string }): CallOptions => ({
  identity: { tenantId: t.tenantId, userId: t.userId, scopes: [SCOPES.read, SCOPES.erase], actor: "user_api" },
});
const embedJob = (t: { tenantId: string }): CallOptions => ({ identity: { tenantId: t.tenantId, scopes: [SCOPES.internalEmbed] } });
const setOf = (t: { tenantId: string }): VectorSet => ({ tenantId: t.tenantId, model: embedder.model, dimensions: embedder.dimensions });

async function remember(t: { tenantId: string; userId: string }, memoryType: string, content: string): Promise<string> {
  const out = await memory.memories.remember({ memoryType, topic: "vector index", content } as never, writer(t));
  return out.memory!.id;
}

async function queryVector(text: string) {
  const [v] = await embedder.embed([text]);
  return vectorParam(v!, embedder.model);
}

function newIndex(maxVectors = 100_000): Promise<VectorIndex> {
  return loadExactScan().then((scan) => new VectorIndex({ pool: searchPool, role: ROLE, scan, maxVectors, log }));
}

/** The index's nominations for `text` in tenant `t`, read inside a search transaction as a search reads them. */
async function nominations(index: VectorIndex, t: { tenantId: string }, text: string, keep: number) {
  const vector = await queryVector(text);
  return withTenant(searchPool, { role: ROLE, tenantId: t.tenantId, readOnly: true }, async (db) => {
    const nominate = await index.current(db, setOf(t));
    return nominate ? nominate(vector, keep) : null;
  });
}

/** The stored vector of one memory, read back as float4. */
async function storedVector(id: string): Promise<Float32Array> {
  const { rows } = await stack.ownerPool.query<{ sent: Buffer }>("SELECT vector_send(embedding) AS sent FROM memories WHERE id = $1", [id]);
  return fromVectorBinary(rows[0]!.sent);
}

beforeAll(async () => {
  stack = await startCoreServices({ label: "vectorindex", embedder });
  memory = await stack.publicMemoryClient();
  tenantA = await stack.createTenant("a");
  tenantB = await stack.createTenant("b");
  searchPool = createPool({ connectionString: stack.db.url, max: 4, applicationName: "vector-index-test" });
  const topics = ["deploy", "billing", "latency", "schema", "onboarding", "tokens", "queues", "alerts"];
  for (let i = 0; i < 240; i++) {
    notes.push(await remember(tenantA, "note", `Note ${i} about ${topics[i % topics.length]} and the ${topics[(i * 3) % topics.length]} work item ${i * 7}`));
  }
  for (let i = 0; i < 3; i++) decisions.push(await remember(tenantA, "decision", `Decision ${i}: keep the ${topics[i]} plan`));
  for (let i = 0; i < 20; i++) await remember(tenantB, "note", `Tenant b note ${i} about ${topics[i % topics.length]}`);
}, 120_000);

afterAll(async () => {
  await searchPool?.end();
  await stack?.close();
});

describe("the in-process vector index", () => {
  it("is empty until its background load settles, then nominates what an exact scan in PostgreSQL ranks nearest", async () => {
    const index = await newIndex();
    expect(await nominations(index, tenantA, "deploy latency", 10)).toBeNull();
    expect(await index.warm(setOf(tenantA))).toBe(true);
    expect(index.size).toBe(notes.length + decisions.length);
    for (const text of ["deploy latency work", "billing schema", "queues and alerts item 70"]) {
      const nominated = (await nominations(index, tenantA, text, 10))!;
      expect(nominated.ids).toHaveLength(40);
      expect(nominated.complete).toBe(false);
      const vector = await queryVector(text);
      // PostgreSQL's exact order with each distance (no predicate on embedding_dim, so the partial HNSW index cannot apply).
      const exact = await withTenant(
        searchPool,
        { role: ROLE, tenantId: tenantA.tenantId, readOnly: true },
        async (db) =>
          (
            await db.query<{ id: string; distance: number }>(
              `SELECT id, (embedding::vector(512) <=> $1::vector(512))::float8 AS distance FROM memories WHERE tenant_id = $2 ORDER BY 2, id`,
              [vector.binary, tenantA.tenantId],
            )
          ).rows,
      );
      const distance = new Map(exact.map((r) => [r.id, r.distance]));
      const kth = exact[39]!.distance;
      // Within int8 rounding (tenant-vectors.ts) of PostgreSQL's order: nothing beyond the 40th
      // nearest by more than the rounding, nearly all of the true 40, the nearest (or a near tie) first.
      for (const id of nominated.ids) expect(distance.get(id)!).toBeLessThanOrEqual(kth + 5e-3);
      const trueForty = new Set(exact.slice(0, 40).map((r) => r.id));
      expect(nominated.ids.filter((id) => trueForty.has(id)).length).toBeGreaterThanOrEqual(36);
      expect(distance.get(nominated.ids[0]!)!).toBeLessThanOrEqual(exact[0]!.distance + 5e-3);
    }
  });

  it("catches up on more writes than one page holds after warming an empty tenant", async () => {
    const tenantC = await stack.createTenant("c");
    const index = await newIndex();
    expect(await index.warm(setOf(tenantC))).toBe(true);
    expect(index.size).toBe(0);
    const written: string[] = [];
    for (let i = 0; i < 260; i++) written.push(await remember(tenantC, "note", `Imported note ${i} on the walrus ledger line ${i * 13}`));
    const nominated = (await nominations(index, tenantC, "Imported note 259 on the walrus ledger line 3367", 10))!;
    expect(index.size).toBe(260);
    expect(nominated.ids[0]).toBe(written[259]);
    expect((await nominations(index, tenantC, "Imported note 0 on the walrus ledger line 0", 10))!.ids[0]).toBe(written[0]);
  });

  it("sees a memory written, re-embedded or erased after it loaded, and never another tenant's", async () => {
    const index = await newIndex();
    await index.warm(setOf(tenantA));
    const fresh = await remember(tenantA, "note", "A freshly written note on zebra migrations");
    const first = (await nominations(index, tenantA, "A freshly written note on zebra migrations", 5))!;
    expect(first.ids[0]).toBe(fresh);
    expect(index.size).toBe(notes.length + decisions.length + 1);

    // Re-embedded by another model: no longer a vector of this set.
    const reembedded = notes[5]!;
    const own = await storedVector(reembedded);
    await memory.maintenance.storeEmbedding({ memoryId: reembedded, model: "another-model", vector: Array.from(own) }, embedJob(tenantA));
    const probe = await withTenant(searchPool, { role: ROLE, tenantId: tenantA.tenantId, readOnly: true }, async (db) =>
      (await index.current(db, setOf(tenantA)))!(vectorParam(Array.from(own), embedder.model), 5),
    );
    expect(probe!.ids).not.toContain(reembedded);

    // Erased: gone from the index.
    const erased = await memory.archive.erase({ ids: [fresh], reason: "secret" }, eraser(tenantA));
    expect(erased.erased).toEqual([fresh]);
    const after = (await nominations(index, tenantA, "A freshly written note on zebra migrations", 5))!;
    expect(after.ids).not.toContain(fresh);
    expect(index.size).toBe(notes.length + decisions.length - 1);

    // Tenant b's index holds b's memories only, and a's nominations never name b's.
    expect(await index.warm(setOf(tenantB))).toBe(true);
    const b = (await nominations(index, tenantB, "deploy", 100))!;
    expect(b.ids).toHaveLength(20);
    expect(b.complete).toBe(true);
    const bIds = new Set(b.ids);
    const a = (await nominations(index, tenantA, "Tenant b note 3 about schema", 100))!;
    expect(a.ids.filter((id) => bIds.has(id))).toEqual([]);
  });

  it("applies concurrent catch-ups once: the index ends with every memory written, each once", async () => {
    const index = await newIndex();
    await index.warm(setOf(tenantA));
    const start = index.size;
    const written = await Promise.all(Array.from({ length: 12 }, (_, i) => remember(tenantA, "note", `Concurrent note ${i} on walrus routing`)));
    const results = await Promise.all(Array.from({ length: 8 }, () => nominations(index, tenantA, "walrus routing", 50)));
    for (const r of results) expect(r).not.toBeNull();
    // One more catch-up settles whatever a skipped one left.
    const settled = (await nominations(index, tenantA, "Concurrent note on walrus routing", 50))!;
    expect(index.size).toBe(start + written.length);
    expect(new Set(settled.ids).size).toBe(settled.ids.length);
    for (const id of written) expect(settled.ids).toContain(id);
  });

  it("never answers without a memory its search saw committed, when another search moved the index first", async () => {
    const index = await newIndex();
    await index.warm(setOf(tenantA));
    // Two searches take the same snapshot; the first reads its changes before W commits, the second after.
    const first = index.catchUp(setOf(tenantA))!;
    const second = index.catchUp(setOf(tenantA))!;
    // A write both will read, so the first one's catch-up moves the index to a newer snapshot.
    const x = await remember(tenantA, "note", "Marmot ledger note, written before both searches");
    const inTransaction = <T>(read: (db: Parameters<typeof selectChangedSince>[0]) => Promise<T>) =>
      withTenant(searchPool, { role: ROLE, tenantId: tenantA.tenantId, readOnly: true }, read);
    const before = await inTransaction((db) => selectChangedSince(db, tenantA.tenantId, first.since));
    const w = await remember(tenantA, "note", "Narwhal ledger reconciliation, written between two searches");
    const [firstNominate, secondNominate] = [
      await inTransaction((db) => first.finish(db, before)),
      await inTransaction(async (db) => second.finish(db, await selectChangedSince(db, tenantA.tenantId, second.since))),
    ];
    expect(firstNominate).not.toBeNull();
    expect(index.catchUp(setOf(tenantA))!.since).not.toBe(first.since);
    expect(before.changedIds).toContain(x);
    // The second search saw W, which the index (moved by the first) does not hold: it answers from
    // the database's index rather than from one that would leave W out.
    expect(secondNominate).toBeNull();
    // The next search catches the index up from the first one's snapshot.
    expect((await nominations(index, tenantA, "Narwhal ledger reconciliation", 10))!.ids).toContain(w);
  });

  it("leaves a leg its filters cut short to the database's index, and keeps a full one", async () => {
    const index = await newIndex();
    await index.warm(setOf(tenantA));
    const gather = (memoryTypes: string[]) =>
      withTenant(searchPool, { role: ROLE, tenantId: tenantA.tenantId, readOnly: true, settings: HNSW_FILTERED_SCAN }, async (db) => {
        const nominate = (await index.current(db, setOf(tenantA)))!;
        return gatherCandidates(db, {
          eligibility: {
            tenantId: tenantA.tenantId,
            memoryTypes: memoryTypes as never,
            scopeNames: null,
            projects: [],
            status: "active",
            recordedAfter: null,
            recordedBefore: null,
            asOf: null,
          },
          query: "deploy latency work",
          policy: { ...SEARCH_POLICY, tokens: "memory", lexicalRankWindow: 100 },
          vector: await queryVector("deploy latency work"),
          nominate: (v) => nominate(v, 20),
          pool: 20,
        });
      });
    const unfiltered = await gather([]);
    expect(unfiltered.vectorSource).toBe("memory");
    expect(unfiltered.candidates.filter((c) => c.fromVector)).toHaveLength(20);
    // Three decisions among ~250 notes: the 80 nominees hold fewer than the leg's 20, so the database finds all three.
    const filtered = await gather(["decision"]);
    expect(filtered.vectorSource).toBe("database");
    expect(
      filtered.candidates
        .filter((c) => c.fromVector)
        .map((c) => c.id)
        .sort(),
    ).toEqual([...decisions].sort());
  });

  it("never holds a tenant with more vectors than its bound", async () => {
    const index = await newIndex(100);
    expect(await index.warm(setOf(tenantA))).toBe(false);
    expect(index.size).toBe(0);
    expect(await nominations(index, tenantA, "deploy", 10)).toBeNull();
    expect(await index.warm(setOf(tenantB))).toBe(true);
  });
});

/** The hashing model, except that QUESTION is embedded as the text it stands for: only the vector leg can tie the two. */
const QUESTION = "zzqq which way did we settle it";
const ANSWER = "Decision 9: retire the gazelle cluster";
const questionEmbedder = {
  model: embedder.model,
  dimensions: embedder.dimensions,
  embed: (texts: readonly string[]) => embedder.embed(texts.map((t) => (t === QUESTION ? ANSWER : t))),
};

describe("a search service with SEARCH_VECTOR_INDEX=memory", () => {
  let service: RunningSearchService;

  let client: RpcClient<typeof SearchService>;

  beforeAll(async () => {
    ({ service, client } = await stack.extraSearchService({ embedder: questionEmbedder, env: { SEARCH_VECTOR_INDEX: "memory" } }));
  });

  it("answers a first page from the database's index while it loads, then from its own, current with every write", async () => {
    {
      const legs = async () => {
        const metric = await service.registry.getSingleMetric("threengram_search_vector_leg_total")!.get();
        const of = (source: string) => metric.values.find((v) => v.labels.source === source)?.value ?? 0;
        return { memory: of("memory"), database: of("database") };
      };
      const search = () => client.search({ query: "Decision 1: keep the billing plan", limit: 5 }, writer(tenantA));
      const first = await search();
      expect(first.hits[0]!.id).toBe(decisions[1]);
      expect(await legs()).toEqual({ memory: 0, database: 1 });
      // The load runs in the background: the next searches come from the index once it is in.
      await expect.poll(async () => (await search(), (await legs()).memory), { timeout: 30_000, interval: 100 }).toBeGreaterThan(0);
      // Written after the load, then buried under newer memories so the recency leg cannot reach
      // it, and asked for in words it does not contain: only the index's catch-up can find it.
      const answer = await remember(tenantA, "decision", ANSWER);
      for (let i = 0; i < 60; i++) await remember(tenantA, "note", `Filler ${i} on the heron backlog`);
      const before = (await legs()).memory;
      const found = await client.search({ query: QUESTION, limit: 5 }, writer(tenantA));
      expect(found.hits[0]!.id).toBe(answer);
      expect((await legs()).memory).toBe(before + 1);
    }
  });

  it("answers a warmed tenant's very first page from its own index", async () => {
    // The stack stops the extra services it started.
    const warmed = await stack.extraSearchService({ embedder: questionEmbedder, env: { SEARCH_VECTOR_INDEX: "memory" } });
    expect(await warmed.service.warmVectors(tenantA.tenantId)).toBe(true);
    const first = await warmed.client.search({ query: "Decision 1: keep the billing plan", limit: 5 }, writer(tenantA));
    expect(first.hits[0]!.id).toBe(decisions[1]);
    const metric = await warmed.service.registry.getSingleMetric("threengram_search_vector_leg_total")!.get();
    expect(metric.values.map((v) => [v.labels.source, v.value])).toEqual([["memory", 1]]);
  });

  it("has nothing to warm when it keeps the vector leg in the database", async () => {
    const plain = await stack.extraSearchService({ embedder: questionEmbedder, env: { SEARCH_VECTOR_INDEX: "database" } });
    expect(await plain.service.warmVectors(tenantA.tenantId)).toBe(false);
  });
});
