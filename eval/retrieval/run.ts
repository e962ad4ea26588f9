/**
 * Retrieval golden-set gate. Loads the fixture into a fresh PostgreSQL database through the real
 * memory service (remember, then revise for chains), runs every query through the real search
 * service over gRPC with the bundled offline embedding model, prints the metrics against the
 * committed floors and fails below any of them.
 *
 *   --record         write the measured values as the new floors (refused if any would go down)
 *   --evidence       also list every query's abstention evidence, weakest first
 *   --policy <json>  try ranking numbers merged over SEARCH_POLICY (calibration; never recorded)
 *
 * Started by `npm run eval:retrieval` (through scripts/run-ts.mjs). Output names fixture ids only, never text.
 */
import { performance } from "node:perf_hooks";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { MemoryService, type RememberRequestSchema } from "@3ngram/proto/memory/v1";
import { SearchService } from "@3ngram/proto/search/v1";
import { createEmbedder, parseEmbeddingsConfig, type Embedder } from "@3ngram/embeddings";
import { createTenantWithKey, loadMemoryConfig, startMemoryService, type RunningMemoryService } from "@3ngram/memory";
import { SEARCH_POLICY, loadSearchConfig, startSearchService, type RunningSearchService, type SearchPolicy } from "@3ngram/search";
import { createMemoryQueueBackend } from "@3ngram/queue";
import { createRpcClient, SCOPES, type CallOptions, type RpcClient } from "@3ngram/rpc";
import { createLogger } from "@3ngram/runtime";
import { MAX_GET_MEMORIES_IDS } from "@3ngram/schema";
import { createTestDatabase, type TestDatabase } from "../../test/support/database.js";
import { createTestKeys } from "../../test/support/keys.js";
import { loadFixture, type Fixture, type FixtureMemory } from "./fixture.js";
import { checkFloors, ratchet, readFloors, writeFloors } from "./floors.js";
import { advisoryAbstention, computeMetrics, describeFailures, K, METRIC_LABELS, type Metrics, type QueryOutcome } from "./metrics.js";

const HERE = new URL("./", import.meta.url);
const FIXTURE_DIR = new URL("fixture/", HERE);
const FLOORS_FILE = new URL("floors.json", HERE);
/** Generous budgets: an embedding that missed its budget would make the run nondeterministic. */
const EMBED_BUDGET_MS = 60_000;

export interface EvalOptions {
  record: boolean;
  evidence: boolean;
  /** Ranking numbers to try instead of SEARCH_POLICY; null runs the committed policy. */
  policy: SearchPolicy | null;
}

export interface EvalRun {
  model: string;
  policy: SearchPolicy;
  metrics: Metrics;
  outcomes: QueryOutcome[];
  timings: { loadMs: number; queryMs: number; totalMs: number };
}

export interface Services {
  db: TestDatabase;
  memory: RunningMemoryService;
  search: RunningSearchService;
  memoryClient: RpcClient<typeof MemoryService>;
  searchClient: RpcClient<typeof SearchService>;
  close(): Promise<void>;
}

/** Real memory and search services on loopback gRPC over a fresh database, sharing one embedder. */
export async function startServices(embedder: Embedder, policy: SearchPolicy | null = null): Promise<Services> {
  const db = await createTestDatabase("evalretrieval");
  const closers: Array<() => Promise<void>> = [() => db.drop()];
  const close = async () => {
    for (const c of closers) await c().catch(() => {});
  };
  try {
    const keys = await createTestKeys();
    const env = {
      DATABASE_URL: db.url,
      SERVICE_TRUSTED_JWKS: keys.trustedJwks,
      GRPC_HOST: "127.0.0.1",
      GRPC_PORT: "0",
      METRICS_PORT: "0",
      EMBEDDINGS_PROVIDER: "local",
      EMBED_INLINE_BUDGET_MS: String(EMBED_BUDGET_MS),
      QUERY_EMBED_BUDGET_MS: String(EMBED_BUDGET_MS),
      LOG_LEVEL: "silent",
    };
    const log = createLogger({ service: "eval-retrieval", level: process.env.EVAL_LOG_LEVEL ?? "silent" });
    // In-process queue: every embedding must land inline (checked below), so nothing is ever queued.
    const queue = createMemoryQueueBackend();
    closers.unshift(() => queue.close());
    const memory = await startMemoryService(loadMemoryConfig(env), { embedder, queue: queue.queue, queueCounts: queue.counts, log });
    closers.unshift(() => memory.close());
    const search = await startSearchService(loadSearchConfig(env), { embedder, log, ...(policy ? { policy } : {}) });
    closers.unshift(() => search.close());
    const signer = await keys.signer("eval");
    const memoryClient = createRpcClient(MemoryService, { address: memory.address, audience: "memory", signer, defaultDeadlineMs: EMBED_BUDGET_MS });
    const searchClient = createRpcClient(SearchService, { address: search.address, audience: "search", signer, defaultDeadlineMs: EMBED_BUDGET_MS });
    closers.unshift(async () => {
      memoryClient.close();
      searchClient.close();
    });
    return { db, memory, search, memoryClient, searchClient, close };
  } catch (err) {
    await close();
    throw err;
  }
}

function rememberRequest(m: FixtureMemory): MessageInitShape<typeof RememberRequestSchema> {
  return {
    memoryType: m.type,
    topic: m.topic,
    content: m.content,
    scope: m.scope,
    ...(m.project !== undefined ? { project: m.project } : {}),
    tags: m.tags ?? [],
    ...(m.owner !== undefined ? { owner: m.owner } : {}),
  };
}

/**
 * Writes the fixture in file order (remember, or revise for a chain link) and answers the
 * fixture-id → memory-id map. Fails when any memory was stored without its embedding, or when a
 * predecessor is not still stored, embedded and marked superseded.
 */
export async function loadMemories(client: RpcClient<typeof MemoryService>, as: CallOptions, fixture: Fixture): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (const m of fixture.memories) {
    const response = m.revises
      ? await client.revise({ predecessorId: ids.get(m.revises)!, edgeIntent: m.edge ?? "supersedes", successor: rememberRequest(m) }, as)
      : await client.remember(rememberRequest(m), as);
    if (!response.memory) throw new Error(`${m.id}: the memory service answered without a memory`);
    if (response.embedded !== "done") throw new Error(`${m.id}: stored without an embedding (${response.embedded})`);
    ids.set(m.id, response.memory.id);
  }
  const predecessors = fixture.memories.flatMap((m) => (m.revises ? [m.revises] : []));
  for (let at = 0; at < predecessors.length; at += MAX_GET_MEMORIES_IDS) {
    const batch = predecessors.slice(at, at + MAX_GET_MEMORIES_IDS);
    const { memories, notFound } = await client.getMemories({ ids: batch.map((p) => ids.get(p)!) }, as);
    if (notFound.length > 0) throw new Error(`${notFound.length} predecessors are missing`);
    for (const stored of memories) {
      const fixtureId = batch.find((p) => ids.get(p) === stored.id);
      if (!stored.supersededBy || stored.status !== "active" || stored.embeddingState !== "done") {
        throw new Error(`${fixtureId}: a predecessor must stay stored, active and embedded, with its successor recorded`);
      }
    }
  }
  return ids;
}

/** Loads the fixture, runs every query and computes the metrics. */
export async function runRetrievalEval(policy: SearchPolicy | null = null): Promise<EvalRun> {
  const started = performance.now();
  const fixture = loadFixture(FIXTURE_DIR);
  const embedder = await createEmbedder(parseEmbeddingsConfig({ EMBEDDINGS_PROVIDER: "local" }), { warmup: true });
  const services = await startServices(embedder, policy);
  try {
    const tenant = await createTenantWithKey(services.memory.pool, { tenantName: "golden-set" });
    const as: CallOptions = { identity: { tenantId: tenant.tenantId, userId: tenant.userId, scopes: [SCOPES.read, SCOPES.write] } };
    const loadStart = performance.now();
    const ids = await loadMemories(services.memoryClient, as, fixture);
    const fixtureIdOf = new Map([...ids].map(([fixtureId, id]) => [id, fixtureId]));
    const queryStart = performance.now();
    const outcomes: QueryOutcome[] = [];
    for (const query of fixture.queries) {
      // limit K is what an agent asks for by default; the pool size follows from it.
      const response = await services.searchClient.search({ query: query.query, limit: K }, as);
      const evidence = response.coverage?.evidence;
      outcomes.push({
        query,
        ranked: response.hits.map((h) => fixtureIdOf.get(h.id) ?? `?${h.id}`),
        abstained: response.coverage?.abstained ?? false,
        evidence: {
          bestCosine: evidence?.bestCosine ?? null,
          termCoverage: evidence?.termCoverage ?? null,
          scoreGap: evidence?.scoreGap ?? null,
        },
      });
    }
    const done = performance.now();
    return {
      model: embedder.model,
      policy: policy ?? SEARCH_POLICY,
      metrics: computeMetrics(outcomes),
      outcomes,
      timings: { loadMs: queryStart - loadStart, queryMs: done - queryStart, totalMs: done - started },
    };
  } finally {
    await services.close();
  }
}

/** Merges a partial policy over the committed one; unknown keys are refused so a typo cannot pass silently. */
export function mergePolicy(base: SearchPolicy, override: unknown): SearchPolicy {
  const merge = (into: unknown, from: unknown, path: string): unknown => {
    if (from === null || typeof from !== "object" || Array.isArray(from)) return from;
    if (into === null || typeof into !== "object") throw new Error(`--policy: ${path || "value"} is not an object in SEARCH_POLICY`);
    const out: Record<string, unknown> = { ...(into as Record<string, unknown>) };
    for (const [key, value] of Object.entries(from)) {
      if (!(key in out)) throw new Error(`--policy: unknown key ${path}${key}`);
      out[key] = merge(out[key], value, `${path}${key}.`);
    }
    return out;
  };
  return merge(base, override, "") as SearchPolicy;
}

const USAGE = "usage: npm run eval:retrieval [-- --record | --evidence | --policy '<json>']";

/** Parses the command line; answers an error message for anything it does not understand. */
export function parseArgs(argv: readonly string[]): EvalOptions | string {
  const options: EvalOptions = { record: false, evidence: false, policy: null };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--record") options.record = true;
    else if (arg === "--evidence") options.evidence = true;
    else if (arg === "--policy" || arg.startsWith("--policy=")) {
      const json = arg === "--policy" ? argv[++i] : arg.slice("--policy=".length);
      if (json === undefined) return `--policy needs a JSON object\n${USAGE}`;
      try {
        options.policy = mergePolicy(SEARCH_POLICY, JSON.parse(json));
      } catch (err) {
        return `${(err as Error).message}\n${USAGE}`;
      }
    } else return `unknown argument: ${arg}\n${USAGE}`;
  }
  if (options.record && options.policy) return "--record measures the committed policy only; drop --policy";
  return options;
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + " ".repeat(width - text.length);
}

const fixed = (x: number | null | undefined, digits = 3) => (x === null || x === undefined ? "-" : x.toFixed(digits));

/**
 * Every query's abstention evidence, weakest first, with the policy's weighted sum next to its
 * threshold (the sum is the rule's when all three signals are present, as they are here).
 */
function printEvidence(run: EvalRun): void {
  const { minEvidence, termCoverageWeight, scoreGapWeight } = run.policy.abstention;
  const unit = (x: number | null | undefined) => Math.min(1, Math.max(0, x ?? 0));
  const rows = run.outcomes.map((o) => {
    const e = o.evidence;
    const sum = unit(e?.bestCosine) + termCoverageWeight * unit(e?.termCoverage) + scoreGapWeight * unit(e?.scoreGap);
    return { o, e, sum };
  });
  rows.sort((a, b) => a.sum - b.sum || (a.o.query.id < b.o.query.id ? -1 : 1));
  console.log(`\nabstention evidence, weakest first (threshold ${minEvidence}; cos + ${termCoverageWeight}·coverage + ${scoreGapWeight}·gap):`);
  console.log(`  ${pad("query", 7)}${pad("slice", 22)}${pad("cosine", 8)}${pad("cover", 8)}${pad("gap", 8)}${pad("sum", 8)}verdict`);
  let marked = false;
  for (const { o, e, sum } of rows) {
    if (!marked && sum >= minEvidence) {
      console.log(`  ${"-".repeat(20)} threshold ${minEvidence} ${"-".repeat(20)}`);
      marked = true;
    }
    const slice = o.query.advisory ? `${o.query.slice} (advisory)` : o.query.slice;
    console.log(`  ${pad(o.query.id, 7)}${pad(slice, 22)}${pad(fixed(e?.bestCosine), 8)}${pad(fixed(e?.termCoverage), 8)}${pad(fixed(e?.scoreGap), 8)}${pad(sum.toFixed(3), 8)}${o.abstained ? "abstained" : "found"}`);
  }
}

/** Runs the eval, prints the report, applies the floors; answers the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const options = parseArgs(argv);
  if (typeof options === "string") {
    console.error(options);
    return 2;
  }
  const run = await runRetrievalEval(options.policy);
  const floors = readFloors(FLOORS_FILE);
  const bySlice = (slice: string) => run.outcomes.filter((o) => o.query.slice === slice && !o.query.advisory).length;
  const advisory = advisoryAbstention(run.outcomes);
  const { weights, abstention } = run.policy;

  console.log(
    `retrieval golden set: ${run.outcomes.length} queries (retrieval ${bySlice("retrieval")}, supersession ${bySlice("supersession")}, ` +
      `abstention ${bySlice("abstention")}${advisory ? ` + ${advisory.of} advisory` : ""}), model ${run.model}`,
  );
  console.log(
    `policy${options.policy ? " (TRIAL, from --policy)" : ""}: vector ${weights.vector}, fts ${weights.fts} (${run.policy.lexicalMatch} words), ` +
      `recency ${weights.recency} (half-life ${run.policy.recencyHalfLifeDays} d), topic bonus ${run.policy.topicMatch.bonus}, ` +
      `supersession penalty ${run.policy.supersessionPenalty}; abstain below ${abstention.minEvidence} = cos + ${abstention.termCoverageWeight}·coverage + ${abstention.scoreGapWeight}·gap`,
  );
  console.log(`load ${(run.timings.loadMs / 1000).toFixed(1)} s, queries ${(run.timings.queryMs / 1000).toFixed(1)} s, total ${(run.timings.totalMs / 1000).toFixed(1)} s\n`);
  console.log(`${pad("metric", 28)}${pad("value", 9)}${pad("floor", 9)}status`);
  const checks = checkFloors(floors, run.metrics);
  for (const c of checks) console.log(`${pad(METRIC_LABELS[c.name], 28)}${pad(c.value.toFixed(4), 9)}${pad(c.floor.toFixed(4), 9)}${c.ok ? "ok" : "BELOW FLOOR"}`);
  if (advisory) console.log(`${pad("near-domain abstention", 28)}${pad(`${advisory.abstained}/${advisory.of}`, 9)}${pad("-", 9)}advisory, not gated`);

  const failures = describeFailures(run.outcomes);
  if (failures.length > 0) {
    console.log(`\nqueries that missed (fixture ids only):`);
    for (const line of failures) console.log(`  ${line}`);
  }
  if (options.evidence) printEvidence(run);

  let code = 0;
  if (floors.model !== run.model) {
    console.error(`\nfloors were recorded with model ${floors.model}, this run used ${run.model}`);
    code = 1;
  }
  if (checks.some((c) => !c.ok)) {
    console.error(`\nbelow floor: ${checks.filter((c) => !c.ok).map((c) => METRIC_LABELS[c.name]).join(", ")}`);
    code = 1;
  }
  if (options.record) {
    const result = ratchet(floors, run.model, run.metrics);
    if ("refused" in result) {
      console.error(`\nnot recording; floors only ratchet up:\n  ${result.refused.join("\n  ")}`);
      return 1;
    }
    writeFloors(FLOORS_FILE, result.next);
    console.log(`\nrecorded floors in eval/retrieval/floors.json`);
  }
  return code;
}
