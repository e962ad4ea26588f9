/**
 * A plain BM25 over a conversation's memories, computed in the harness: the baseline the LoCoMo
 * data's README quotes (k1 1.2, b 0.75, lower-case word tokens, English stop words dropped), so a
 * run shows what the search service adds over the textbook lexical ranking on the same text.
 */

/**
 * The Snowball English stop list, which PostgreSQL's `english` text-search configuration drops too
 * (tsearch_data/english.stop), so the baseline and the service's lexical leg ignore the same words.
 */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its itself " +
    "they them their theirs themselves what which who whom this that these those am is are was were be been being have has had " +
    "having do does did doing a an the and but if or because as until while of at by for with about against between into through " +
    "during before after above below to from up down in out on off over under again further then once here there when where why " +
    "how all any both each few more most other some such no nor not only own same so than too very s t can will just don should now"
  ).split(" "),
);

/** Lower-case runs of letters and digits, stop words dropped ("Don't" -> "don", "t" -> both dropped). */
export function bm25Tokens(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOP_WORDS.has(w));
}

/**
 * rank_bm25's BM25Okapi, the common Python implementation: a term in more than half the documents
 * (a speaker's name, in a two-person chat) would have a negative idf, and gets EPSILON times the
 * mean idf of the vocabulary instead.
 */
const EPSILON = 0.25;

export class Bm25 {
  private readonly termFrequencies: Map<string, number>[];
  private readonly lengths: number[];
  private readonly averageLength: number;
  private readonly idf = new Map<string, number>();

  constructor(
    documents: readonly string[],
    private readonly k1 = 1.2,
    private readonly b = 0.75,
  ) {
    const tokenised = documents.map(bm25Tokens);
    this.lengths = tokenised.map((t) => t.length);
    this.averageLength = this.lengths.reduce((a, n) => a + n, 0) / Math.max(1, documents.length);
    this.termFrequencies = tokenised.map((tokens) => {
      const tf = new Map<string, number>();
      for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
      return tf;
    });
    const df = new Map<string, number>();
    for (const tf of this.termFrequencies) for (const t of tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
    const n = documents.length;
    let sum = 0;
    for (const [t, d] of df) {
      const idf = Math.log((n - d + 0.5) / (d + 0.5));
      this.idf.set(t, idf);
      sum += idf;
    }
    const floor = (EPSILON * sum) / Math.max(1, df.size);
    for (const [t, idf] of this.idf) if (idf < 0) this.idf.set(t, floor);
  }

  /** Every document's score for the query (a repeated query word counts each time, as in rank_bm25). */
  scores(query: string): number[] {
    const terms = bm25Tokens(query);
    return this.termFrequencies.map((tf, i) => {
      let score = 0;
      for (const t of terms) {
        const f = tf.get(t);
        if (f === undefined) continue;
        score += (this.idf.get(t)! * f * (this.k1 + 1)) / (f + this.k1 * (1 - this.b + (this.b * this.lengths[i]!) / this.averageLength));
      }
      return score;
    });
  }

  /** Indexes of the k best documents, best first; equal scores keep document order. */
  top(query: string, k: number): number[] {
    const scores = this.scores(query);
    return scores
      .map((_, i) => i)
      .sort((a, b) => scores[b]! - scores[a]! || a - b)
      .slice(0, k);
  }
}
