/**
 * With a model in the process, a search opens its transaction while its query is embedded, so the
 * scope and term lookups do not wait behind the model; with a remote provider the query is
 * embedded first, so no connection waits on the network. What a test can see from outside: while
 * the query's embedding is held back, is a search connection inside a transaction?
 */
import { HashingEmbedder, type Embedder } from "@3ngram/embeddings";
import { SearchService } from "@3ngram/proto/search/v1";
import { bridgeClient, SCOPES, type RpcClient } from "@3ngram/rpc";
import { searchContract } from "@3ngram/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";

/**
 * Hashing vectors, except that a query holding PROBE is answered only when the test releases it;
 * `remote` says whether it presents itself as a network provider (Embedder.remote).
 */
class GatedEmbedder implements Embedder {
  private readonly inner = new HashingEmbedder({ dimensions: 512 });
  constructor(readonly remote: boolean) {}
  readonly model = this.inner.model;
  readonly dimensions = this.inner.dimensions;
  private release: (() => void) | null = null;
  private gate: Promise<void> = Promise.resolve();

  hold(): void {
    this.gate = new Promise((resolve) => (this.release = resolve));
  }

  open(): void {
    this.release?.();
  }

  async embed(texts: readonly string[]): Promise<number[][]> {
    if (texts.some((t) => t.includes(PROBE))) await this.gate;
    return this.inner.embed(texts);
  }
}

const PROBE = "overlapprobe";
const embedder = new GatedEmbedder(false);
const remoteEmbedder = new GatedEmbedder(true);
let stack: CoreServices;
let remoteClient: RpcClient<typeof SearchService>;
let tenant: { tenantId: string; userId: string };
const as = () => ({ identity: { tenantId: tenant.tenantId, userId: tenant.userId, scopes: [SCOPES.read, SCOPES.write] } });

beforeAll(async () => {
  stack = await startCoreServices({ label: "searchoverlap", embedder });
  tenant = await stack.createTenant("a");
  const memory = await stack.publicMemoryClient();
  await memory.memories.remember({ memoryType: "note", topic: "probe", content: `The ${PROBE} memory, found by its word.` }, as());
  // A second search service whose embedder presents itself as remote (no request leaves the process).
  // Its budget is far beyond the watch below: a held embedding that ran out of budget would let the
  // search go on without its vector and open a transaction, which is not what this test looks for.
  ({ client: remoteClient } = await stack.extraSearchService({ embedder: remoteEmbedder, env: { QUERY_EMBED_BUDGET_MS: "60000" } }));
});

afterAll(async () => {
  embedder.open();
  remoteEmbedder.open();
  await stack?.close();
});

/**
 * Search connections waiting inside a transaction between statements right now: a search waiting
 * on its query's embedding (the health probe's single statements are never idle in a transaction).
 */
async function searchTransactionsOpen(): Promise<number> {
  const { rows } = await stack.ownerPool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = '3ngram-search' AND state = 'idle in transaction'",
  );
  return rows[0]!.n;
}

async function transactionOpenWhileHeld(
  gate: GatedEmbedder,
  search: (query: string) => Promise<{ hits: unknown[] }>,
): Promise<{ sawTransaction: boolean; hits: number }> {
  gate.hold();
  const answer = search(`${PROBE} question`);
  let sawTransaction = false;
  // Generous: the search needs only a few round trips to reach its wait. Bounded by the clock, not
  // by a count of polls, so a loaded machine's slower polls cannot outlast an embedding budget.
  const until = Date.now() + 1_500;
  while (Date.now() < until && !sawTransaction) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    sawTransaction = (await searchTransactionsOpen()) > 0;
  }
  gate.open();
  const result = await answer;
  return { sawTransaction, hits: result.hits.length };
}

describe("query embedding and the search transaction", () => {
  it("reads the scope and the query's terms while an in-process model embeds the query", async () => {
    const search = await stack.publicSearchClient();
    const { sawTransaction, hits } = await transactionOpenWhileHeld(embedder, (query) => search.search({ query, limit: 5 }, as()));
    expect(sawTransaction).toBe(true);
    expect(hits).toBe(1);
  });

  it("embeds the query before taking a connection when the provider is remote", async () => {
    const search = bridgeClient(SearchService, searchContract, remoteClient);
    const { sawTransaction, hits } = await transactionOpenWhileHeld(remoteEmbedder, (query) => search.search({ query, limit: 5 }, as()));
    expect(sawTransaction).toBe(false);
    expect(hits).toBe(1);
  });
});
