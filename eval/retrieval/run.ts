/**
 * Retrieval golden-set gate. Loads the fixture into a fresh PostgreSQL database through the real
 * memory service (remember, then revise for chains), runs every query through the real search
 * service over gRPC with the bundled offline embedding model, prints the metrics against the
 * committed floors and fails below any of them.
 *
 *   --record         write the measured values as the new floors (refused if any would go down)
 *   --evidence       also list every query's abstention evidence, weakest first
 *   --policy <json>  try ranking numbers merged over SEARCH_POLICY (calibration; never recorded)
 *   --fit            choose fusion and abstention by cross-validation over both fixtures and LoCoMo (fit.ts)
 *
 * Started by `npm run eval:retrieval` (through scripts/run-ts.mjs). Output names fixture ids only, never text.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { memoryServices } from "@3ngram/proto/memory/v1";
import { searchServices } from "@3ngram/proto/search/v1";
import { createEmbedder, parseEmbeddingsConfig, type Embedder } from "@3ngram/embeddings";
import { createTenantWithKey, loadMemoryConfig, startMemoryService, type RunningMemoryService } from "@3ngram/memory";
import { SEARCH_POLICY, evidenceScore, loadSearchConfig, startSearchService, type RunningSearchService, type SearchPolicy } from "@3ngram/search";
import { createMemoryQueueBackend } from "@3ngram/queue";
import { connectPeer, SCOPES, type CallOptions, type Peer } from "@3ngram/rpc";
import { createLogger } from "@3ngram/runtime";
import { MAX_GET_MEMORIES_IDS, memoryContracts, searchContracts, type RememberInput } from "@3ngram/schema";
import { createTestDatabase, type TestDatabase } from "../../test/support/database.js";
import { createTestKeys } from "../../test/support/keys.js";
import { locomoFixture, readConversations } from "../locomo/data.js";
import { rememberAll } from "../locomo/load.js";
import { loadFixture, type Fixture, type FixtureMemory } from "./fixture.js";
import { fitPolicy, type Pools } from "./fit.js";
import { gatherPools, outcomesUnder, type QueryPools } from "./pools.js";
import { checkFloors, fixtureFloors, ratchet, readFloors, writeFloors, type FloorsByFixture } from "./floors.js";
import { advisoryAbstention, computeMetrics, describeFailures, K, METRIC_LABELS, METRIC_NAMES, type Metrics, type QueryOutcome } from "./metrics.js";

const HERE = new URL("./", import.meta.url);
const FLOORS_FILE = new URL("floors.json", HERE);

/**
 * The fixtures, written independently and in different styles: "golden" (terse engineering
 * notes) and "conversational" (first-person memories, long ones, near-duplicates, three-link
 * chains). Each has its own floors; a policy is chosen for the worse of the two (docs/evals.md).
 */
export const FIXTURES = [
  { name: "golden", dir: new URL("fixture/", HERE) },
  { name: "conversational", dir: new URL("fixture-conversational/", HERE) },
] as const;
export type FixtureName = (typeof FIXTURES)[number]["name"];
/**
 * LoCoMo's development half (eval/locomo), a third data set for `--fit` only: conversation turns
 * written by others, each question searching its own conversation's scope. Gated by eval:locomo.
 */
const LOCOMO = "locomo";

/**
 * The embedder the environment names (EMBEDDINGS_PROVIDER, EMBEDDINGS_LOCAL_MODEL, …; the bundled
 * local model when it names none), so one command compares models:
 * `EMBEDDINGS_LOCAL_MODEL=e5-small-v2 npm run eval:retrieval`. Floors hold for one model only.
 */
export function evalEmbedder(defaultWorkers?: number): Promise<Embedder> {
  return createEmbedder(parseEmbeddingsConfig({ EMBEDDINGS_PROVIDER: "local", ...process.env }), {
    warmup: true,
    ...(defaultWorkers === undefined ? {} : { defaultWorkers }),
  });
}

/** The ablation: each leg alone and the fused ranking, all from the same loaded memories. */
export const VARIANTS = ["vector", "lexical", "fused"] as const;
export type Variant = (typeof VARIANTS)[number];

/** The policy a variant runs: the committed one, with the other leg's weight set to zero. */
export function variantPolicy(base: SearchPolicy, variant: Variant): SearchPolicy {
  if (variant === "fused") return base;
  return { ...base, weights: { ...base.weights, ...(variant === "vector" ? { fts: 0 } : { vector: 0 }) } };
}
/** Generous budgets: an embedding that missed its budget would make the run nondeterministic. */
const EMBED_BUDGET_MS = 60_000;

export interface EvalOptions {
  record: boolean;
  evidence: boolean;
  /** Ranking numbers to try instead of SEARCH_POLICY; null runs the committed policy. */
  policy: SearchPolicy | null;
  /** Fit fusion and abstention by cross-validation over the fixtures (fit.ts) instead of gating. */
  fit: boolean;
}

/** One variant's measurement on one fixture. */
export interface VariantRun {
  variant: Variant;
  policy: SearchPolicy;
  metrics: Metrics;
  outcomes: QueryOutcome[];
}

export interface EvalRun {
  fixture: FixtureName;
  model: string;
  /** The fused run first is not guaranteed; look variants up by name. */
  variants: VariantRun[];
  /** The fused policy's outcomes ranked offline from the pools, with every evidence signal (for --evidence). */
  pooled: ReturnType<typeof outcomesUnder>;
  timings: { loadMs: number; queryMs: number; totalMs: number };
}

type MemoryPeer = Peer<typeof memoryServices, typeof memoryContracts>;
type SearchPeer = Peer<typeof searchServices, typeof searchContracts>;

export interface Services {
  db: TestDatabase;
  memory: RunningMemoryService;
  search: RunningSearchService;
  memoryPeer: MemoryPeer;
  searchPeer: SearchPeer;
  /** One search client per extra policy asked for, in order (each its own search service). */
  extraSearchPeers: SearchPeer[];
  close(): Promise<void>;
}

/** Real memory and search services on loopback gRPC over a fresh database, sharing one embedder. */
export async function startServices(embedder: Embedder, policy: SearchPolicy | null = null, extraPolicies: readonly SearchPolicy[] = []): Promise<Services> {
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
    const memoryPeer = connectPeer(memoryServices, memoryContracts, {
      address: memory.address,
      audience: "memory",
      signer,
      defaultDeadlineMs: EMBED_BUDGET_MS,
    });
    const connectSearch = (address: string) =>
      connectPeer(searchServices, searchContracts, { address, audience: "search", signer, defaultDeadlineMs: EMBED_BUDGET_MS });
    const searchPeer = connectSearch(search.address);
    closers.unshift(async () => {
      memoryPeer.close();
      searchPeer.close();
    });
    const extraSearchPeers: SearchPeer[] = [];
    for (const extra of extraPolicies) {
      const other = await startSearchService(loadSearchConfig(env), { embedder, log, policy: extra });
      closers.unshift(() => other.close());
      const peer = connectSearch(other.address);
      closers.unshift(async () => peer.close());
      extraSearchPeers.push(peer);
    }
    return { db, memory, search, memoryPeer, searchPeer, extraSearchPeers, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The fields remember and revise share (revise carries them beside the predecessor). */
function rememberRequest(m: FixtureMemory): Omit<RememberInput, "facts"> {
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
export async function loadMemories(memory: MemoryPeer, as: CallOptions, fixture: Fixture): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  // In the public shapes, as the gateway writes.
  const calls = memory.memories;
  for (const m of fixture.memories) {
    const response = m.revises
      ? await calls.revise({ predecessorId: ids.get(m.revises)!, edgeIntent: m.edge ?? "supersedes", ...rememberRequest(m) }, as)
      : await calls.remember(rememberRequest(m), as);
    if (!response.memory) throw new Error(`${m.id}: the memory service answered without a memory`);
    if (response.embedded !== "done") throw new Error(`${m.id}: stored without an embedding (${response.embedded})`);
    ids.set(m.id, response.memory.id);
  }
  const predecessors = fixture.memories.flatMap((m) => (m.revises ? [m.revises] : []));
  for (let at = 0; at < predecessors.length; at += MAX_GET_MEMORIES_IDS) {
    const batch = predecessors.slice(at, at + MAX_GET_MEMORIES_IDS);
    const { memories, notFound } = await calls.getMemories({ ids: batch.map((p) => ids.get(p)!) }, as);
    if (notFound.length > 0) throw new Error(`${notFound.length} predecessors are missing`);
    for (const stored of memories) {
      const fixtureId = batch.find((p) => ids.get(p) === stored.id);
      if (!stored.supersededBy || stored.status !== "active" || stored.embedded !== "done") {
        throw new Error(`${fixtureId}: a predecessor must stay stored, active and embedded, with its successor recorded`);
      }
    }
  }
  return ids;
}

/** Runs every query of the fixture through one search client; answers the outcomes in fixture ids. */
async function runQueries(peer: SearchPeer, as: CallOptions, fixture: Fixture, fixtureIdOf: ReadonlyMap<string, string>): Promise<QueryOutcome[]> {
  const outcomes: QueryOutcome[] = [];
  for (const query of fixture.queries) {
    // limit K is what an agent asks for by default; the pool size follows from it.
    const response = await peer.search.search({ query: query.query, limit: K }, as);
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
  return outcomes;
}

/** Loads a fixture (or LoCoMo) into fresh services and gathers every query's candidate pool (for --fit). */
async function loadAndGather(name: FixtureName | typeof LOCOMO, embedder: Embedder): Promise<QueryPools[]> {
  const fixture = name === LOCOMO ? locomoFixture(readConversations()) : loadFixture(FIXTURES.find((f) => f.name === name)!.dir);
  const services = await startServices(embedder);
  try {
    const tenant = await createTenantWithKey(services.memory.pool, { tenantName: `fit-${name}` });
    const as: CallOptions = { identity: { tenantId: tenant.tenantId, userId: tenant.userId, scopes: [SCOPES.read, SCOPES.write] } };
    // LoCoMo's turns revise nothing: written one lane per conversation, as eval:locomo writes them.
    const ids = name === LOCOMO ? await rememberAll(services.memoryPeer, as, fixture.memories) : await loadMemories(services.memoryPeer, as, fixture);
    const fixtureIdOf = new Map([...ids].map(([fixtureId, id]) => [id, fixtureId]));
    // One set of pools per full-text vector.
    const english = await gatherPools(services.memory.pool, tenant.tenantId, embedder, fixture, fixtureIdOf, { ...SEARCH_POLICY, tokens: "english" });
    const memory = await gatherPools(services.memory.pool, tenant.tenantId, embedder, fixture, fixtureIdOf, { ...SEARCH_POLICY, tokens: "memory" });
    return [english, memory];
  } finally {
    await services.close();
  }
}

/**
 * Loads one fixture and measures it. The fused ranking (the committed or trial policy) runs
 * through the real search service over gRPC; the single-leg ablations rank the candidate pools
 * the search service's own SQL gathers, offline, with the other leg's weight at zero (a second
 * and third pass through the service would double the gate's time for the same numbers).
 */
export async function runRetrievalEval(name: FixtureName, policy: SearchPolicy | null = null, embedder?: Embedder): Promise<EvalRun> {
  const started = performance.now();
  const fixture = loadFixture(FIXTURES.find((f) => f.name === name)!.dir);
  embedder ??= await evalEmbedder();
  const base = policy ?? SEARCH_POLICY;
  const services = await startServices(embedder, base);
  try {
    const tenant = await createTenantWithKey(services.memory.pool, { tenantName: `golden-set-${name}` });
    const as: CallOptions = { identity: { tenantId: tenant.tenantId, userId: tenant.userId, scopes: [SCOPES.read, SCOPES.write] } };
    const loadStart = performance.now();
    const ids = await loadMemories(services.memoryPeer, as, fixture);
    const fixtureIdOf = new Map([...ids].map(([fixtureId, id]) => [id, fixtureId]));
    const queryStart = performance.now();
    const fusedOutcomes = await runQueries(services.searchPeer, as, fixture, fixtureIdOf);
    const pools = await gatherPools(services.memory.pool, tenant.tenantId, embedder, fixture, fixtureIdOf, base);
    const variants: VariantRun[] = VARIANTS.map((variant) => {
      const p = variantPolicy(base, variant);
      const outcomes = variant === "fused" ? fusedOutcomes : outcomesUnder(pools, p);
      return { variant, policy: p, metrics: computeMetrics(outcomes), outcomes };
    });
    const done = performance.now();
    return {
      fixture: name,
      model: embedder.model,
      variants,
      pooled: outcomesUnder(pools, base),
      timings: { loadMs: queryStart - loadStart, queryMs: done - queryStart, totalMs: done - started },
    };
  } finally {
    await services.close();
  }
}

export function variantOf(run: EvalRun, variant: Variant): VariantRun {
  return run.variants.find((v) => v.variant === variant)!;
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

const USAGE = "usage: npm run eval:retrieval [-- --record | --evidence | --policy '<json>' | --fit]";

/** Parses the command line; answers an error message for anything it does not understand. */
export function parseArgs(argv: readonly string[]): EvalOptions | string {
  const options: EvalOptions = { record: false, evidence: false, policy: null, fit: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--record") options.record = true;
    else if (arg === "--evidence") options.evidence = true;
    else if (arg === "--fit") options.fit = true;
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
  if (options.fit && (options.record || options.policy)) return "--fit stands alone; drop --record and --policy";
  return options;
}

/** Left-aligns text in a column of the printed tables. */
export function pad(text: string, width: number): string {
  return text.length >= width ? text : text + " ".repeat(width - text.length);
}

const fixed = (x: number | null | undefined, digits = 3) => (x === null || x === undefined ? "-" : x.toFixed(digits));

/**
 * Every query's abstention evidence, weakest first, with the verdict's sum next to its threshold.
 * The signals come from the pools ranked offline under the same policy (the envelope reports only
 * some of them); the gate checks that ranking against the service's.
 */
function printEvidence(run: EvalRun): void {
  const policy = variantOf(run, "fused").policy;
  const { minEvidence, model: _calibratedFor, ...weights } = policy.abstention;
  const rows = run.pooled.map((o) => ({ o, sum: evidenceScore(o.full, weights) ?? 0 }));
  rows.sort((a, b) => a.sum - b.sum || (a.o.query.id < b.o.query.id ? -1 : 1));
  console.log(
    `\nabstention evidence, weakest first (abstain below ${minEvidence} = cos + ${weights.termCoverageWeight}·coverage + ` +
      `${weights.weightedCoverageWeight}·idf-coverage + ${weights.topMatchWeight}·top-match):`,
  );
  console.log(`  ${pad("query", 7)}${pad("slice", 22)}${pad("cosine", 8)}${pad("cover", 8)}${pad("idfcov", 8)}${pad("top", 8)}${pad("sum", 8)}verdict`);
  let marked = false;
  for (const { o, sum } of rows) {
    if (!marked && sum >= minEvidence) {
      console.log(`  ${"-".repeat(20)} threshold ${minEvidence} ${"-".repeat(20)}`);
      marked = true;
    }
    const e = o.full;
    const slice = o.query.advisory ? `${o.query.slice} (advisory)` : o.query.slice;
    console.log(
      `  ${pad(o.query.id, 7)}${pad(slice, 22)}${pad(fixed(e.bestCosine), 8)}${pad(fixed(e.termCoverage), 8)}${pad(fixed(e.weightedCoverage), 8)}${pad(fixed(e.topMatch), 8)}${pad(sum.toFixed(3), 8)}${o.abstained ? "abstained" : "found"}`,
    );
  }
}

/** The ablation table: each metric under vector only, lexical only and fused. */
function printAblation(run: EvalRun): void {
  console.log(`${pad("metric", 28)}${VARIANTS.map((v) => pad(v, 10)).join("")}`);
  for (const name of METRIC_NAMES) {
    console.log(`${pad(METRIC_LABELS[name], 28)}${VARIANTS.map((v) => pad(variantOf(run, v).metrics[name].toFixed(4), 10)).join("")}`);
  }
}

/**
 * Whether the fused ranking beats each leg alone on recall@5 and MRR@5 (ties count as not
 * beating): what fusion is for. Answers the failures.
 */
export function fusionShortfalls(run: EvalRun): string[] {
  const fused = variantOf(run, "fused").metrics;
  const out: string[] = [];
  for (const leg of ["vector", "lexical"] as const) {
    for (const name of ["recallAt5", "mrrAt5"] as const) {
      const single = variantOf(run, leg).metrics[name];
      if (!(fused[name] > single)) out.push(`fused ${METRIC_LABELS[name]} ${fused[name].toFixed(4)} does not beat ${leg} only ${single.toFixed(4)}`);
    }
  }
  return out;
}

/**
 * Every fixture's candidate pools, and LoCoMo's when asked (the fit), for the fit and the probes
 * (passages.ts, word-prior.ts). EVAL_FIT_POOLS=<file> keeps them between runs (they depend only on
 * the data, the model and the pool settings, not on the weights being fitted); delete it after
 * changing those. A data set the file lacks is gathered and added to it.
 */
export async function gatherAllPools(embedder: Embedder, { locomo = false } = {}): Promise<Pools[]> {
  const cache = process.env.EVAL_FIT_POOLS;
  const all: Pools[] =
    cache && existsSync(cache)
      ? (JSON.parse(readFileSync(cache, "utf8")) as Array<Omit<Pools, "fixtureIdOf"> & { fixtureIdOf: [string, string][] }>).map((p) => ({
          ...p,
          fixtureIdOf: new Map(p.fixtureIdOf),
        }))
      : [];
  const wanted: Array<FixtureName | typeof LOCOMO> = [...FIXTURES.map((f) => f.name), ...(locomo ? ([LOCOMO] as const) : [])];
  const missing = wanted.filter((name) => !all.some((p) => p.dataSet === name));
  for (const name of missing) for (const pools of await loadAndGather(name, embedder)) all.push({ ...pools, dataSet: name });
  if (cache && missing.length > 0) writeFileSync(cache, JSON.stringify(all.map((p) => ({ ...p, fixtureIdOf: [...p.fixtureIdOf] }))));
  return all.filter((p) => (wanted as string[]).includes(p.dataSet));
}

/** Runs the eval, prints the report, applies the floors; answers the process exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const options = parseArgs(argv);
  if (typeof options === "string") {
    console.error(options);
    return 2;
  }
  if (options.fit) {
    const embedder = await evalEmbedder();
    try {
      return fitPolicy(await gatherAllPools(embedder, { locomo: true }));
    } finally {
      await embedder.close?.();
    }
  }
  const started = performance.now();
  const floorsFile = readFloors(FLOORS_FILE);
  const embedder = await evalEmbedder();
  const policy = options.policy ?? SEARCH_POLICY;
  const { weights, abstention, fusion } = policy;
  console.log(
    `policy${options.policy ? " (TRIAL, from --policy)" : ""}: vector ${weights.vector}, lexical ${weights.fts}, ` +
      `fusion ${fusion.method}${fusion.method === "rrf" ? ` (k ${fusion.rrfK})` : ""}, recency ${weights.recency} (half-life ${policy.recencyHalfLifeDays} d), ` +
      `topic bonus ${policy.topicMatch.bonus}, supersession penalty ${policy.supersessionPenalty}; ` +
      `abstain below ${abstention.minEvidence} = cos + ${abstention.termCoverageWeight}·coverage + ` +
      `${abstention.weightedCoverageWeight}·idf-coverage + ${abstention.topMatchWeight}·top-match; full-text vector ${policy.tokens}, BM25`,
  );
  let code = 0;
  const next: FloorsByFixture = { model: floorsFile.model, fixtures: { ...floorsFile.fixtures } };
  let refused = false;
  for (const { name } of FIXTURES) {
    const run = await runRetrievalEval(name, options.policy, embedder);
    const fused = variantOf(run, "fused");
    const bySlice = (slice: string) => fused.outcomes.filter((o) => o.query.slice === slice && !o.query.advisory).length;
    const advisory = advisoryAbstention(fused.outcomes);
    console.log(
      `\n== fixture ${name}: ${fused.outcomes.length} queries (retrieval ${bySlice("retrieval")}, supersession ${bySlice("supersession")}, ` +
        `abstention ${bySlice("abstention")}${advisory ? ` + ${advisory.of} advisory` : ""}), model ${run.model}`,
    );
    console.log(
      `load ${(run.timings.loadMs / 1000).toFixed(1)} s, queries (fused via gRPC, legs from the pools) ${(run.timings.queryMs / 1000).toFixed(1)} s, total ${(run.timings.totalMs / 1000).toFixed(1)} s\n`,
    );
    printAblation(run);
    const floors = fixtureFloors(floorsFile, name);
    console.log(`\n${pad("fused metric", 28)}${pad("value", 9)}${pad("floor", 9)}status`);
    const checks = checkFloors(floors, fused.metrics);
    for (const c of checks) {
      const status = c.advisory ? `advisory, not gated${c.value + 1e-9 >= c.floor ? "" : " (below target)"}` : c.ok ? "ok" : "BELOW FLOOR";
      console.log(`${pad(METRIC_LABELS[c.name], 28)}${pad(c.value.toFixed(4), 9)}${pad(c.floor.toFixed(4), 9)}${status}`);
    }
    if (advisory) console.log(`${pad("near-domain abstention", 28)}${pad(`${advisory.abstained}/${advisory.of}`, 9)}${pad("-", 9)}advisory, not gated`);

    const failures = describeFailures(fused.outcomes);
    if (failures.length > 0) {
      console.log(`\nqueries that missed, fused (fixture ids only):`);
      for (const line of failures) console.log(`  ${line}`);
    }
    if (options.evidence) printEvidence(run);

    if (floors.model !== run.model) {
      console.error(`\n${name}: floors were recorded with model ${floors.model}, this run used ${run.model}`);
      code = 1;
    }
    if (checks.some((c) => !c.ok)) {
      console.error(
        `\n${name}: below floor: ${checks
          .filter((c) => !c.ok)
          .map((c) => METRIC_LABELS[c.name])
          .join(", ")}`,
      );
      code = 1;
    }
    // Reported, not gated: with the committed policy fusion does not yet beat every leg on every
    // fixture (docs/evals.md, the ablation table).
    const shortfalls = fusionShortfalls(run);
    if (shortfalls.length > 0) console.log(`\n${name}, fusion (not gated): ${shortfalls.join("; ")}`);
    if (options.record) {
      const result = ratchet(floors, run.model, fused.metrics);
      if ("refused" in result) {
        console.error(`\n${name}: not recording; floors only ratchet up:\n  ${result.refused.join("\n  ")}`);
        refused = true;
      } else next.fixtures[name] = { ...result.next.floors, ...(result.next.advisory ? { advisory: result.next.advisory } : {}) };
    }
  }
  if (options.record) {
    if (refused) return 1;
    writeFloors(FLOORS_FILE, next);
    console.log(`\nrecorded floors in eval/retrieval/floors.json`);
  }
  console.log(`\nretrieval gate: ${((performance.now() - started) / 1000).toFixed(1)} s for ${FIXTURES.length} fixtures`);
  return code;
}
