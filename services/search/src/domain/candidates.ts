import type { Queryable } from "@3ngram/db";
import {
  countTermMatches,
  selectCandidates,
  selectQueryTerms,
  type CandidateRow,
  type LexicalMatch,
  type Nomination,
  type QueryTerms,
  type QueryVector,
  type Tokens,
  type VectorSource,
} from "../db/candidates.js";
import type { Eligibility } from "../db/eligibility.js";
import type { TermCountCache } from "../in-process/term-counts.js";
import { bm25Idf, bm25Score, lexicalQueryText, matchesAnyTerm, type CandidateFeatures, type SearchPolicy } from "./policy.js";

/** A candidate row with its lexical score and the query's term evidence added: what the policy ranks. */
export type Candidate = CandidateRow & Required<CandidateFeatures>;

/** How the full-text leg runs for one query, and what BM25 scores a row with. */
interface LexicalPlan {
  match: LexicalMatch;
  /** The terms BM25 scores: the discriminating ones the leg searches on, else every term. */
  scored: string[];
  idf: Map<string, number>;
  queryTerms: Candidate["queryTerms"];
}

/**
 * A first relevance page's candidate pool, ready to rank: the query's terms counted among the
 * eligible memories, the full-text leg planned from those counts, the three legs gathered in one
 * statement (db/candidates.ts), and each row given its BM25 score and the query's term evidence.
 */
export async function gatherCandidates(
  db: Queryable,
  args: {
    eligibility: Eligibility;
    query: string;
    policy: SearchPolicy;
    /** The query's vector, or its embedding still under way (awaited after the term counts); null: no vector leg. */
    vector: QueryVector | null | Promise<QueryVector | null>;
    /** The vector leg's rows from an in-process index; absent: the database's index. */
    nominate?: ((vector: QueryVector) => Nomination | null) | undefined;
    pool: number;
    /** Recently counted words, so a common word is not counted again on every search. */
    termCounts?: TermCountCache | undefined;
    /** The query's terms and the tenant's statistics, when the caller read them already; read here otherwise. */
    terms?: QueryTerms | undefined;
  },
): Promise<{ candidates: Candidate[]; vectorSource: VectorSource }> {
  const { eligibility, query, policy } = args;
  const terms = args.terms ?? (await selectQueryTerms(db, eligibility.tenantId, query, policy.tokens));
  const anyTerm = matchesAnyTerm(query, policy);
  // How many eligible memories hold each word (counted up to the cap): the term-coverage evidence,
  // and the document frequency that decides which words are too common to search on.
  const maxMatches = anyTerm ? policy.lexicalTermMaxMatches : 0;
  const frequencies = await termFrequencies(db, eligibility, policy.tokens, terms.lexemes, maxMatches + 1, args.termCounts);
  const plan = lexicalPlan(query, terms, frequencies, anyTerm ? maxMatches : null, policy);
  const { rows, vectorSource } = await selectCandidates(db, {
    eligibility,
    query,
    tokens: policy.tokens,
    match: plan.match,
    lexicalRank: { terms: plan.scored.map((lexeme) => ({ lexeme, idf: plan.idf.get(lexeme) ?? 0 })), ...policy.bm25, averageLength: terms.averageLength },
    lexemes: terms.lexemes,
    rankWindow: policy.lexicalRankWindow,
    vector: args.vector,
    nominate: args.nominate,
    pool: args.pool,
  });
  return { candidates: scoreLexical(rows, plan, terms.averageLength, policy), vectorSource };
}

/**
 * Per lexeme, how many eligible memories hold it (up to `cap`): the counts the cache knows, and the
 * rest counted in one statement and remembered.
 */
async function termFrequencies(
  db: Queryable,
  eligibility: Eligibility,
  tokens: Tokens,
  lexemes: readonly string[],
  cap: number,
  cache: TermCountCache | undefined,
): Promise<number[]> {
  // The two vectors count differently ("squat" is in more lexical_tsv rows): the cache keys carry which one.
  const keys = lexemes.map((lexeme) => `${tokens}:${lexeme}`);
  const known = cache ? cache.lookup(eligibility, cap, keys) : lexemes.map(() => undefined);
  const unknown = lexemes.filter((_, i) => known[i] === undefined);
  if (unknown.length === 0) return known as number[];
  const counted = await countTermMatches(db, eligibility, tokens, unknown, cap);
  cache?.remember(
    eligibility,
    cap,
    keys.filter((_, i) => known[i] === undefined),
    counted,
  );
  let next = 0;
  return known.map((count) => count ?? counted[next++]!);
}

/**
 * Under "any" (maxMatches given), the leg searches the words some but at most maxMatches eligible
 * memories hold, any of them; if every word is absent or that common, all of them must match. A
 * query in websearch syntax, or any query under "all", is parsed by websearch_to_tsquery.
 */
function lexicalPlan(query: string, terms: QueryTerms, frequencies: readonly number[], maxMatches: number | null, policy: SearchPolicy): LexicalPlan {
  const { lexemes, stems, docs } = terms;
  // Term coverage counts the english stems only (a query's words, once each): the raw and
  // identifier forms the tokeniser adds would count a word several times and a stored stem
  // with an unstored inflection as half missing.
  const stemIndexes = lexemes.flatMap((lexeme, i) => (stems.has(lexeme) ? [i] : []));
  const stored = stemIndexes.filter((i) => frequencies[i]! > 0).length;
  let match: LexicalMatch = { websearch: lexicalQueryText(query, policy) };
  let scored = lexemes;
  if (maxMatches !== null && lexemes.length > 0) {
    const discriminating = lexemes.filter((_, i) => frequencies[i]! > 0 && frequencies[i]! <= maxMatches);
    if (discriminating.length > 0) scored = discriminating;
    match = discriminating.length > 0 ? { lexemes: discriminating, join: "any" } : { lexemes, join: "all" };
  }
  const idf = new Map(lexemes.map((lexeme, i) => [lexeme, bm25Idf(frequencies[i]!, docs)]));
  const idfStored = lexemes.reduce((sum, lexeme, i) => sum + (frequencies[i]! > 0 ? idf.get(lexeme)! : 0), 0);
  const idfTotal = lexemes.reduce((sum, lexeme) => sum + idf.get(lexeme)!, 0);
  return { match, scored, idf, queryTerms: { total: stemIndexes.length, stored, idfTotal, idfStored } };
}

/**
 * Adds to each row its BM25 score over the terms the leg searched on, the idf mass of every query
 * term it holds, and the query's term evidence. The rows are extended in place, not copied: a copy
 * per row with rest and spread took V8's generic property-copy path (~1 ms per search for ~150 rows).
 */
function scoreLexical(rows: CandidateRow[], plan: LexicalPlan, averageLength: number, policy: SearchPolicy): Candidate[] {
  const scored = new Set(plan.scored);
  for (const row of rows as Candidate[]) {
    const tf: Record<string, number> = {};
    let idfMatched = 0;
    for (const hit of row.termHits) {
      const at = hit.lastIndexOf(" ");
      const lexeme = hit.slice(0, at);
      idfMatched += plan.idf.get(lexeme) ?? 0;
      if (scored.has(lexeme)) tf[lexeme] = Number(hit.slice(at + 1));
    }
    row.ftsRaw = row.lexical ? bm25Score(tf, plan.idf, row.docLength, averageLength, policy) : 0;
    row.idfMatched = idfMatched;
    row.queryTerms = plan.queryTerms;
  }
  return rows as Candidate[];
}
