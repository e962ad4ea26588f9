/**
 * LoCoMo development-half gate (`npm run eval:locomo`; docs/evals.md "LoCoMo development half").
 * Five public LoCoMo conversations, read from LOCOMO_DIR: every turn is remembered through the real
 * memory service, every question of categories 1–4 with evidence asked of the real search
 * service over gRPC within its conversation's scope (limit 5), and a question is answered when a
 * turn its evidence names is among the hits. Prints hit@5, MRR@5 and evidence recall overall, per
 * category and per conversation, for vector only / lexical only (ranked offline from the pools
 * the search service's SQL gathers, as eval:retrieval does), fused (the service) and a plain BM25
 * computed here; fails below the committed floors.
 *
 *   --record   write the measured values as the new floors (refused if any would go down)
 *   --misses   also list each missed question with its evidence and top 5 (dia_ids only)
 *
 * Output names conversation ids, question indexes and dia_ids only, never question or memory text.
 */
import { performance } from "node:perf_hooks";
import type { Embedder } from "@3ngram/embeddings";
import { createTenantWithKey } from "@3ngram/memory";
import { SCOPES, type CallOptions } from "@3ngram/rpc";
import { SEARCH_POLICY } from "@3ngram/search";
import { K } from "../retrieval/metrics.js";
import { gatherPools, mapInFlight, outcomesUnder } from "../retrieval/pools.js";
import { VARIANTS, evalEmbedder, pad, startServices, variantPolicy } from "../retrieval/run.js";
import { Bm25 } from "./bm25.js";
import { LOCOMO_CATEGORIES, diaIdOf, locomoFixture, readConversations, type LocomoConversation, type LocomoQuestion } from "./data.js";
import { CROSS_MACHINE_TOLERANCE, floorFailures, ratchetLocomo, readLocomoFloors, writeLocomoFloors } from "./floors.js";
import { rememberAll } from "./load.js";
import { LOCOMO_METRICS, LOCOMO_METRIC_LABELS, judge, summarise, type Judged } from "./metrics.js";

const FLOORS_FILE = new URL("floors.json", import.meta.url);
/** Searches in flight at once: enough to overlap embedding a question with the SQL of another. */
const QUERIES_IN_FLIGHT = 4;
/**
 * Model workers when EMBEDDINGS_WORKERS is unset: two keep both cores embedding while writes are
 * in flight (the vectors are the same whatever the number; measured ~11 ms a turn against ~16 with one).
 */
const EMBEDDING_WORKERS = 2;

/** The report's columns: each leg alone and fused (from the search service), and the harness's own BM25. */
const COLUMNS = [...VARIANTS, "bm25"] as const;
type Column = (typeof COLUMNS)[number];

/** The usual reading of LoCoMo's category numbers. */
const CATEGORY_NAMES: Record<number, string> = { 1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop" };

export interface LocomoOptions {
  record: boolean;
  misses: boolean;
}

const USAGE = "usage: npm run eval:locomo [-- --record | --misses]";

export function parseLocomoArgs(argv: readonly string[]): LocomoOptions | string {
  const options: LocomoOptions = { record: false, misses: false };
  for (const arg of argv) {
    if (arg === "--record") options.record = true;
    else if (arg === "--misses") options.misses = true;
    else return `unknown argument: ${arg}\n${USAGE}`;
  }
  return options;
}

/**
 * BM25's top K per question, in fixture ids: one index per conversation over each memory's topic
 * and content (the text the memory service stores and indexes; with the content alone the
 * baseline is lower, docs/evals.md).
 */
export function bm25Ranked(conversations: readonly LocomoConversation[]): string[][] {
  return conversations.flatMap((c) => {
    const index = new Bm25(c.memories.map((m) => `${m.topic}\n${m.content}`));
    return c.questions.map((q) => index.top(q.question, K).map((i) => c.memories[i]!.id));
  });
}

/**
 * The embedder, keeping each question's vector: the search service embeds a question, then the
 * pools (pools.ts) embed it again for the legs, and the second time becomes a lookup (a sixth of
 * the run's model work). Stored documents pass straight through.
 */
function keepingQueryVectors(embedder: Embedder): Embedder {
  const kept = new Map<string, number[]>();
  return {
    model: embedder.model,
    dimensions: embedder.dimensions,
    ...(embedder.remote === undefined ? {} : { remote: embedder.remote }),
    async embed(texts, options) {
      if (options?.purpose !== "query") return embedder.embed(texts, options);
      const missing = texts.filter((t) => !kept.has(t));
      if (missing.length > 0) (await embedder.embed(missing, options)).forEach((vector, i) => kept.set(missing[i]!, vector));
      return texts.map((t) => kept.get(t)!);
    },
  };
}

/** A question as the output names it: conversation id and index in its qa list. */
const nameOf = (q: LocomoQuestion) => `${q.conversation} q${q.index}`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Wall time since the clock started, and this process's CPU time (the model's worker threads
 * included, PostgreSQL's not), which tells a slow run on a busy machine from a slower harness.
 */
function startClock(): () => string {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(cpu);
    return `${seconds(performance.now() - wall)} (CPU ${seconds((used.user + used.system) / 1000)})`;
  };
}

export async function main(argv: readonly string[]): Promise<number> {
  const options = parseLocomoArgs(argv);
  if (typeof options === "string") {
    console.error(options);
    return 2;
  }
  const total = startClock();
  const conversations = readConversations();
  const fixture = locomoFixture(conversations);
  // In fixture order: question i is fixture.queries[i].
  const questions = conversations.flatMap((c) => c.questions);
  const floors = readLocomoFloors(FLOORS_FILE);
  const ranked = { bm25: bm25Ranked(conversations) } as Record<Column, string[][]>;

  // The embedder the environment names (EMBEDDINGS_*), the bundled default when it names none.
  const model = await evalEmbedder(EMBEDDING_WORKERS);
  const embedder = keepingQueryVectors(model);
  const services = await startServices(embedder);
  let load: string, searches: string, legs: string, agreeing: number;
  // Every question here is answerable, so each "not stored" verdict is a wrong one.
  let abstained = 0;
  try {
    const tenant = await createTenantWithKey(services.memory.pool, { tenantName: "locomo" });
    const as: CallOptions = { identity: { tenantId: tenant.tenantId, userId: tenant.userId, scopes: [SCOPES.read, SCOPES.write] } };
    const loadClock = startClock();
    const ids = await rememberAll(services.memoryPeer, as, fixture.memories);
    const fixtureIdOf = new Map([...ids].map(([fixtureId, id]) => [id, fixtureId]));
    load = loadClock();
    const searchClock = startClock();
    ranked.fused = await mapInFlight(fixture.queries, QUERIES_IN_FLIGHT, async (q) => {
      const response = await services.searchPeer.search.search({ query: q.query, limit: K, scope: q.scope! }, as);
      if (response.coverage?.abstained) abstained += 1;
      return response.hits.map((h) => fixtureIdOf.get(h.id) ?? `?${h.id}`);
    });
    searches = searchClock();
    const legsClock = startClock();
    const pools = await gatherPools(services.memory.pool, tenant.tenantId, embedder, fixture, fixtureIdOf, SEARCH_POLICY);
    for (const leg of ["vector", "lexical"] as const) ranked[leg] = outcomesUnder(pools, variantPolicy(SEARCH_POLICY, leg)).map((o) => o.ranked);
    // The legs are ranked offline; the fused ranking of the same pools must be the service's.
    const offline = outcomesUnder(pools, SEARCH_POLICY);
    agreeing = offline.filter((o, i) => o.ranked.join() === ranked.fused[i]!.slice(0, K).join()).length;
    legs = legsClock();
  } finally {
    await services.close();
    await model.close?.();
  }

  const judged = Object.fromEntries(COLUMNS.map((c) => [c, ranked[c].map((r, i) => judge(r, fixture.queries[i]!.expected))])) as Record<Column, Judged[]>;
  const turns = fixture.memories.length;
  const skipped = conversations.reduce((n, c) => n + c.skipped.otherCategory + c.skipped.withoutEvidence, 0);
  console.log(
    `LoCoMo development half: conversations ${conversations.map((c) => c.id).join(", ")}; ${turns} turns, ${questions.length} questions ` +
      `(categories 1–4 with evidence; ${skipped} others not asked); model ${embedder.model}`,
  );
  printEvidenceProblems(questions);
  console.log(`load ${turns} memories ${load}, ${questions.length} searches via gRPC ${searches}, pools for the legs ${legs}, total ${total()}`);
  console.log(`offline fused ranking of the pools matches the service's top ${K} on ${agreeing}/${questions.length} questions`);

  // Rows: everything, each category, each conversation.
  const rows: Array<[string, (q: LocomoQuestion) => boolean]> = [
    ["all", () => true],
    ...LOCOMO_CATEGORIES.map((c): [string, (q: LocomoQuestion) => boolean] => [`category ${c} (${CATEGORY_NAMES[c]})`, (q) => q.category === c]),
    ...conversations.map((c): [string, (q: LocomoQuestion) => boolean] => [`conversation ${c.id}`, (q) => q.conversation === c.id]),
  ];
  for (const metric of LOCOMO_METRICS) {
    console.log(`\n${pad(LOCOMO_METRIC_LABELS[metric], 28)}${pad("n", 6)}${COLUMNS.map((c) => pad(c === "bm25" ? "BM25" : c, 10)).join("")}`.trimEnd());
    for (const [label, keep] of rows) {
      const at = questions.flatMap((q, i) => (keep(q) ? [i] : []));
      const cells = COLUMNS.map((c) => pad(summarise(at.map((i) => judged[c][i]!))[metric].toFixed(4), 10));
      console.log(`${pad(label, 28)}${pad(String(at.length), 6)}${cells.join("")}`.trimEnd());
    }
  }

  const fused = summarise(judged.fused);
  console.log(`\nfused: ${fused.hits}/${fused.questions} questions answered`);
  console.log(
    `abstained (said "not stored"; every question is answerable): ${abstained}/${questions.length} (${((100 * abstained) / questions.length).toFixed(1)} %)`,
  );
  for (const c of conversations) {
    const missed = questions.flatMap((q, i) => (q.conversation === c.id && judged.fused[i]!.rank === null ? [`q${q.index}`] : []));
    console.log(`  conversation ${c.id} missed ${missed.length}: ${missed.join(" ")}`);
  }
  if (options.misses) {
    console.log(`\nmissed questions, fused (evidence -> top ${K}, dia_ids):`);
    for (const [i, q] of questions.entries()) {
      if (judged.fused[i]!.rank !== null) continue;
      console.log(`  ${nameOf(q)} [category ${q.category}] ${q.evidence.join(",") || "-"} -> ${ranked.fused[i]!.slice(0, K).map(diaIdOf).join(",") || "-"}`);
    }
  }

  let code = 0;
  console.log(`\n${pad("fused metric", 28)}${pad("value", 9)}floor (a run passes within ${CROSS_MACHINE_TOLERANCE} of it)`);
  for (const name of LOCOMO_METRICS) {
    console.log(`${pad(LOCOMO_METRIC_LABELS[name], 28)}${pad(fused[name].toFixed(4), 9)}${floors ? floors.floors[name] : "-"}`);
  }
  const failures = floorFailures(floors, embedder.model, fused);
  if (failures.length > 0 && !options.record) {
    console.error(`\nLoCoMo: ${failures.join("; ")}`);
    code = 1;
  }
  if (options.record) {
    const result = ratchetLocomo(floors, embedder.model, fused);
    if ("refused" in result) {
      console.error(`\nnot recording; floors only ratchet up:\n  ${result.refused.join("\n  ")}`);
      return 1;
    }
    writeLocomoFloors(FLOORS_FILE, result.next);
    console.log(`\nrecorded floors in eval/locomo/floors.json (model ${embedder.model})`);
  }
  return code;
}

/** Evidence entries set aside, and questions left with none: named by conversation, index and the entry as written. */
function printEvidenceProblems(questions: readonly LocomoQuestion[]): void {
  const malformed = questions.flatMap((q) => q.malformed.map((e) => `${nameOf(q)} ${JSON.stringify(e.slice(0, 24))}`));
  const dangling = questions.flatMap((q) => q.dangling.map((e) => `${nameOf(q)} ${e}`));
  const empty = questions.filter((q) => q.evidence.length === 0).map(nameOf);
  console.log(
    `evidence set aside: ${malformed.length} malformed (${malformed.join("; ") || "none"}), ${dangling.length} naming no turn (${dangling.join("; ") || "none"}); ` +
      `questions left without evidence, counted as misses: ${empty.length}${empty.length > 0 ? ` (${empty.join(", ")})` : ""}`,
  );
}
