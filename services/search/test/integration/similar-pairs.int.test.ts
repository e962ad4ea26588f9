/**
 * The consolidation scan (SimilarPairs) against the real search and memory services on PostgreSQL
 * with pgvector. Memories are embedded inline by the hashing embedder, so the expected pairs are
 * computed here from the same embedder and compared with what the HNSW scan returns.
 */
import { randomUUID } from "node:crypto";
import type { MemoryType as MemoryTypeName } from "@3ngram/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HashingEmbedder, cosineSimilarity, memoryEmbeddingText } from "@3ngram/embeddings";
import { SCOPES, type CallOptions } from "@3ngram/rpc";
import { startCoreServices, type CoreServices, type PublicMemoryClient, type PublicSearchClient } from "../../../../test/support/core-services.js";
import { reader, rejection, writer } from "../../../../test/support/calls.js";
import { SIMILAR_PAIR_POLICY } from "../../src/domain/pair-policy.js";

type Tenant = { tenantId: string; userId: string; apiKey: string };

let stack: CoreServices;
let memory: PublicMemoryClient;
let search: PublicSearchClient;
let tenant: Tenant;
let other: Tenant;
const embedder = new HashingEmbedder({ dimensions: 512 });

const scan = (t: Tenant): CallOptions => ({ identity: { tenantId: t.tenantId, scopes: [SCOPES.internalConsolidate] } });

const TEXTS = {
  stripe: { topic: "payments provider", content: "We decided to use Stripe for card payments in the EU launch." },
  stripeAgain: { topic: "payments provider", content: "We decided to use Stripe for all card payments in the EU launch." },
  deploy: { topic: "deploy window", content: "Deploys happen on Tuesday and Thursday mornings after the standup." },
  deployPlan: { topic: "deploy window", content: "Deploys happen on Tuesday and Thursday mornings after the standup, with a rollback plan." },
  squat: { topic: "back squat", content: "Top set 98 kg today." },
} as const;
type Name = keyof typeof TEXTS;
const ids = {} as Record<Name, string>;

async function remember(t: Tenant, name: Name, memoryType: MemoryTypeName = "decision"): Promise<string> {
  const stored = await memory.memories.remember({ memoryType, ...TEXTS[name] }, writer(t));
  expect(stored.embedded).toBe("done");
  return stored.memory!.id;
}

/** Every unordered pair whose cosine reaches the lowest band, as the scan should report it. */
async function expectedPairs(names: Name[]): Promise<Array<{ pair: string; band: string }>> {
  const vectors = await embedder.embed(names.map((n) => memoryEmbeddingText(TEXTS[n])));
  const out: Array<{ pair: string; band: string; similarity: number }> = [];
  for (let i = 0; i < names.length; i++) {
    for (let j = i + 1; j < names.length; j++) {
      const similarity = cosineSimilarity(vectors[i]!, vectors[j]!);
      const band = SIMILAR_PAIR_POLICY.bands.find((b) => similarity >= b.threshold)?.band;
      // Later names were remembered later: the newer one comes first.
      if (band) out.push({ pair: `${names[j]}>${names[i]}`, band, similarity });
    }
  }
  return out.sort((a, b) => b.similarity - a.similarity).map(({ pair, band }) => ({ pair, band }));
}

const nameOf = (id: string) => (Object.entries(ids).find(([, v]) => v === id)?.[0] ?? id) as Name;

beforeAll(async () => {
  stack = await startCoreServices({ label: "similarpairs" });
  memory = await stack.publicMemoryClient();
  search = await stack.publicSearchClient();
  tenant = await stack.createTenant("pairs");
  other = await stack.createTenant("pairs other");
  for (const name of Object.keys(TEXTS) as Name[]) ids[name] = await remember(tenant, name);
  // The same near-duplicate text in another tenant must never pair across tenants.
  await remember(other, "stripeAgain");
});

afterAll(async () => {
  await stack?.close();
});

describe("SimilarPairs", () => {
  it("finds near-duplicate and related live pairs, newer -> older, banded by the policy thresholds", async () => {
    const expected = await expectedPairs(["stripe", "stripeAgain", "deploy", "deployPlan", "squat"]);
    // The fixture covers both bands and leaves the unrelated memory out.
    expect(new Set(expected.map((e) => e.band))).toEqual(new Set(["near_duplicate", "related"]));
    const result = await search.similarPairs({}, scan(tenant));
    expect(result.model).toBe("hashing-512");
    expect(result.scanned).toBe(5);
    expect(result.pairs.map((p) => ({ pair: `${nameOf(p.newerId)}>${nameOf(p.olderId)}`, band: p.band }))).toEqual(expected);
    const stripe = result.pairs.find((p) => p.olderId === ids.stripe && p.newerId === ids.stripeAgain)!;
    expect(stripe).toMatchObject({ band: "near_duplicate", threshold: 0.92, newerType: "decision", olderType: "decision" });
    expect(stripe.similarity).toBeGreaterThan(0.92);
    for (const p of result.pairs) expect(p.similarity).toBeGreaterThanOrEqual(p.threshold);
  });

  it("bounds the answer by limit (most similar first) and refuses a limit above the policy's", async () => {
    const all = await search.similarPairs({}, scan(tenant));
    const one = await search.similarPairs({ limit: 1 }, scan(tenant));
    expect(one.pairs).toEqual(all.pairs.slice(0, 1));
    const refused = await rejection(search.similarPairs({ limit: SIMILAR_PAIR_POLICY.maxPairs + 1 }, scan(tenant)));
    expect(refused).toMatchObject({ reason: "invalid_input" });
  });

  it("leaves out pairs already proposed (either orientation) or linked, and memories that are no longer live", async () => {
    const before = await search.similarPairs({}, scan(tenant));
    const deployPair = before.pairs.find((p) => p.newerId === ids.deployPlan && p.olderId === ids.deploy)!;
    expect(deployPair).toBeDefined();
    // Proposed in the reverse orientation: still the same pair.
    await memory.proposals.createConsolidationProposals(
      { proposals: [{ fromId: ids.deploy, toId: ids.deployPlan, edgeType: "extends", similarity: deployPair.similarity }] },
      scan(tenant),
    );
    const afterProposal = await search.similarPairs({}, scan(tenant));
    expect(afterProposal.pairs.map((p) => [p.newerId, p.olderId])).not.toContainEqual([ids.deployPlan, ids.deploy]);

    // A revise closes the older Stripe decision: its pair goes, and the new head pairs with the rest on its own merits.
    const head = await memory.memories.revise(
      { predecessorId: ids.stripe, memoryType: "decision", topic: "payments provider", content: `Switched to Adyen ${randomUUID()}` },
      writer(tenant),
    );
    await memory.memories.archive({ memoryId: ids.squat }, writer(tenant));
    const afterRevise = await search.similarPairs({}, scan(tenant));
    const involved = afterRevise.pairs.flatMap((p) => [p.newerId, p.olderId]);
    expect(involved).not.toContain(ids.stripe);
    expect(involved).not.toContain(ids.squat);
    expect(afterRevise.scanned).toBe(4);
    expect(head.memory!.id).toBeTruthy();
  });

  it("compares only vectors of the configured model", async () => {
    const t = await stack.createTenant("pairs model");
    const a = await remember(t, "stripe");
    await remember(t, "stripeAgain");
    expect((await search.similarPairs({}, scan(t))).pairs).toHaveLength(1);
    await stack.ownerPool.query("UPDATE memories SET embedding_model = 'retired-model' WHERE id = $1", [a]);
    const after = await search.similarPairs({}, scan(t));
    expect(after.pairs).toEqual([]);
    expect(after.scanned).toBe(1);
  });

  it("is for the consolidator's internal scope only, and sees only its own tenant", async () => {
    expect((await rejection(search.similarPairs({}, reader(tenant)))).reason).toBe("insufficient_scope");
    const theirs = await search.similarPairs({}, scan(other));
    expect(theirs.pairs).toEqual([]);
    expect(theirs.scanned).toBe(1);
  });
});
