import { describe, expect, it } from "vitest";
import {
  SEARCH_POLICY,
  abstentionEvidence,
  candidatePoolSize,
  fusedScore,
  isShortQuery,
  lexicalQueryText,
  bm25Idf,
  bm25Score,
  bm25Term,
  legValues,
  rank,
  shouldAbstain,
  type CandidateFeatures,
} from "../src/domain/policy.js";
import { escapeLike } from "../src/db/candidates.js";

/** The model the verdicts under test are calibrated for, and the one queries are embedded with. */
const MODEL = "test-model";

const base: CandidateFeatures = { cosine: 0.5, ftsRaw: 0, lexical: false, ageDays: 0, topicMatch: false, superseded: false };

describe("search policy", () => {
  it("weighs a rare word above a common one and a short memory above a long one (BM25)", () => {
    expect(bm25Idf(1, 1000)).toBeGreaterThan(bm25Idf(100, 1000));
    expect(bm25Idf(1000, 1000)).toBeGreaterThan(0);
    // N below df (counts from different places) is read as N = df, never a negative weight.
    expect(bm25Idf(50, 10)).toBeCloseTo(bm25Idf(50, 50));
    expect(bm25Term(2, 1, 10, 20)).toBeGreaterThan(bm25Term(2, 1, 40, 20));
    // Term frequency saturates: a second occurrence adds less than the first.
    const once = bm25Term(2, 1, 20, 20);
    expect(bm25Term(2, 2, 20, 20) - once).toBeLessThan(once);
    expect(bm25Term(2, 0, 20, 20)).toBe(0);
    const idf = new Map([
      ["squat", 3],
      ["week", 0.5],
    ]);
    expect(bm25Score({ squat: 1 }, idf, 20, 20)).toBeGreaterThan(bm25Score({ week: 1 }, idf, 20, 20));
    expect(bm25Score({ squat: 1, week: 1 }, idf, 20, 20)).toBeCloseTo(bm25Term(3, 1, 20, 20) + bm25Term(0.5, 1, 20, 20));
  });

  it("normalises a leg inside the pool by reciprocal rank or min-max", () => {
    const pool = [
      { id: "a", x: 4 },
      { id: "b", x: 2 },
      { id: "c", x: null },
      { id: "d", x: 2 },
    ];
    const values = (method: "rrf" | "minmax") =>
      legValues(
        pool.map((p) => ({ ...p, cosine: null, lexical: true, ftsRaw: 0 })),
        (c) => pool.find((p) => p.id === c.id)!.x,
        { ...SEARCH_POLICY, fusion: { method, rrfK: 5 } },
      );
    expect(Object.fromEntries(values("minmax"))).toEqual({ a: 1, b: 0, d: 0 });
    // Ties share the better rank; a candidate the leg did not score gets nothing from it.
    expect(Object.fromEntries(values("rrf"))).toEqual({ a: 1, b: 6 / 7, d: 6 / 7 });
    // One scored candidate, or all equal: each gets the full value.
    expect(Object.fromEntries(legValues([{ id: "a", cosine: 0.3, lexical: false, ftsRaw: 0 }], (c) => c.cosine))).toEqual({ a: 1 });
  });

  it("adds the topic bonus only to short queries", () => {
    const match = { ...base, topicMatch: true };
    expect(isShortQuery("alice")).toBe(true);
    expect(isShortQuery("  alice   smith ")).toBe(true);
    expect(isShortQuery("who is alice really")).toBe(false);
    const withBonus = { ...SEARCH_POLICY, topicMatch: { maxTokens: 2, bonus: 0.5 } };
    expect(fusedScore(match, { vector: 0, lexical: 0 }, true, withBonus) - fusedScore(match, { vector: 0, lexical: 0 }, false, withBonus)).toBeCloseTo(0.5);
  });

  it("lets newer memories win ties through recency", () => {
    const withRecency = { ...SEARCH_POLICY, weights: { ...SEARCH_POLICY.weights, recency: 0.05 } };
    expect(fusedScore({ ...base, ageDays: 1 }, { vector: 0, lexical: 0 }, false, withRecency)).toBeGreaterThan(
      fusedScore({ ...base, ageDays: 400 }, { vector: 0, lexical: 0 }, false, withRecency),
    );
  });

  it("demotes a superseded row below an otherwise weaker successor", () => {
    const predecessor = { ...base, id: "a", cosine: 0.95, lexical: true, ftsRaw: 0.5, superseded: true };
    const successor = { ...base, id: "b", cosine: 0.6 };
    const order = rank([predecessor, successor], "a long enough query here").map((r) => r.id);
    expect(order).toEqual(["b", "a"]);
    expect(fusedScore(predecessor, { vector: 1, lexical: 1 }, false)).toBeCloseTo(
      fusedScore({ ...predecessor, superseded: false }, { vector: 1, lexical: 1 }, false) - SEARCH_POLICY.supersessionPenalty,
    );
  });

  it("lets a memory the query's model has not embedded yet rank by its words in the vector leg's place", () => {
    // Mid re-embedding: "a" holds the query's rare word but only the old model's vector; the others
    // have the new model's vector and match no word.
    const pending = { ...base, id: "a", cosine: null, lexical: true, ftsRaw: 3 };
    const near = { ...base, id: "b", cosine: 0.7 };
    const far = { ...base, id: "c", cosine: 0.4 };
    const query = "a long enough query here";
    // Reciprocal ranks keep the arithmetic visible: near gets 1 on the vector leg, far 61/62.
    const rrf = { ...SEARCH_POLICY, fusion: { method: "rrf" as const, rrfK: 60 } };
    const ranked = rank([near, pending, far], query, rrf);
    expect(ranked.map((r) => r.id)).toEqual(["a", "b", "c"]);
    // Its stand-in is its lexical value times the pool's closest vector value, never more.
    expect(ranked[0]!.score).toBeCloseTo(fusedScore(pending, { vector: 1, lexical: 1 }, false, rrf));
    // A weaker word match stands in for less.
    const weaker = { ...base, id: "d", cosine: null, lexical: true, ftsRaw: 1 };
    expect(rank([near, pending, weaker], query, rrf).find((r) => r.id === "d")!.score).toBeCloseTo(
      fusedScore(weaker, { vector: 61 / 62, lexical: 61 / 62 }, false, rrf),
    );
    // Without any vector in the pool (no query vector), nothing stands in: words and recency rank alone.
    const noVectors = rank([pending, { ...weaker, id: "e" }], query);
    expect(noVectors[0]!.score).toBeCloseTo(fusedScore(pending, { vector: 0, lexical: 1 }, false));
  });

  it("puts the one memory holding a short query's rare word first, whatever its cosine", () => {
    // A made-up word: the model finds other memories closer than the one that holds it.
    const holder = { ...base, id: "holder", cosine: 0.55, lexical: true, ftsRaw: 9 };
    const closer = [0.8, 0.75, 0.7, 0.65, 0.6].map((cosine, i) => ({ ...base, id: `near${i}`, cosine }));
    const order = (policy: typeof SEARCH_POLICY, query: string) => rank([...closer, holder], query, policy).map((r) => r.id);
    expect(order(SEARCH_POLICY, "kazumitorvex")[0]).toBe("holder");
    // Fused like a longer question, the closer vectors would win.
    expect(order({ ...SEARCH_POLICY, shortQueryFusion: "same" }, "kazumitorvex")[0]).toBe("near0");
    expect(order(SEARCH_POLICY, "what is kazumitorvex about")[0]).toBe("near0");
  });

  it("orders ties by id so the ranking is total", () => {
    const order = rank(
      [
        { ...base, id: "b" },
        { ...base, id: "a" },
      ],
      "q",
    ).map((r) => r.id);
    expect(order).toEqual(["a", "b"]);
  });

  it("sizes each leg's pool as max(limit × factor, floor)", () => {
    expect(candidatePoolSize(5)).toBe(50);
    expect(candidatePoolSize(25)).toBe(100);
    expect(candidatePoolSize(5, { ...SEARCH_POLICY, candidatePool: { factor: 10, floor: 20 } })).toBe(50);
  });

  it("reports the evidence the verdict uses", () => {
    const ranked = rank(
      [
        { ...base, id: "a", cosine: 0.7 },
        { ...base, id: "b", cosine: 0.2, lexical: true, ftsRaw: 0.1 },
      ],
      "some query words",
    );
    const evidence = abstentionEvidence(ranked);
    expect(evidence.bestCosine).toBeCloseTo(0.7);
    expect(evidence.anyLexical).toBe(true);
    expect(evidence.scoreGap).toBeCloseTo(ranked[0]!.score - ranked[1]!.score);
    expect(abstentionEvidence([]).scoreGap).toBeNull();
    expect(abstentionEvidence(rank([{ ...base, id: "a", cosine: null }], "q")).bestCosine).toBeNull();
  });

  it("abstains when the fused evidence is weak, whatever single signal is present", () => {
    // The rule's behaviour, with a fixed two-signal weighting (the committed numbers are calibrated by the eval).
    const policy = {
      ...SEARCH_POLICY,
      abstention: { model: MODEL, minEvidence: 1.2, termCoverageWeight: 1, weightedCoverageWeight: 0, topMatchWeight: 0 },
    };
    const { minEvidence, termCoverageWeight } = policy.abstention;
    const verdict = (c: CandidateFeatures[]) =>
      shouldAbstain(
        abstentionEvidence(
          rank(
            c.map((x, i) => ({ ...x, id: String(i) })),
            "q",
            policy,
          ),
        ),
        c.length,
        MODEL,
        policy,
      );
    expect(verdict([])).toBe(true);
    // A fair cosine alone is not enough when the question's words are stored nowhere.
    expect(
      verdict([
        { ...base, cosine: 0.6, queryTerms: { total: 4, stored: 1 } },
        { ...base, cosine: 0.59 },
      ]),
    ).toBe(true);
    // The same cosine with the question's words stored is found.
    expect(
      verdict([
        { ...base, cosine: 0.6, queryTerms: { total: 4, stored: 4 } },
        { ...base, cosine: 0.3 },
      ]),
    ).toBe(false);
    // Without a vector leg the threshold shrinks to the signal left: the words.
    expect(verdict([{ ...base, cosine: null, queryTerms: { total: 3, stored: 0 } }])).toBe(true);
    const lexicalOnly = { ...base, cosine: null, queryTerms: { total: 2, stored: 2 } };
    expect(verdict([{ ...lexicalOnly, lexical: true, ftsRaw: 0.5 }, lexicalOnly])).toBe(false);
    // Nothing measurable at all: abstain.
    expect(shouldAbstain({ bestCosine: null, anyLexical: false, scoreGap: null, termCoverage: null }, 1, MODEL, policy)).toBe(true);
    // Evidence exactly at the threshold counts as found.
    expect(shouldAbstain({ bestCosine: minEvidence - termCoverageWeight, anyLexical: true, scoreGap: 0, termCoverage: 1 }, 2, MODEL, policy)).toBe(false);
    // The idf signals count when weighted: rare words stored nowhere pull the evidence down.
    const idfPolicy = {
      ...policy,
      abstention: { ...policy.abstention, minEvidence: 1.5, termCoverageWeight: 0, weightedCoverageWeight: 1 },
    };
    expect(shouldAbstain({ bestCosine: 0.6, anyLexical: true, scoreGap: 0, termCoverage: 1, weightedCoverage: 0.2 }, 2, MODEL, idfPolicy)).toBe(true);
    expect(shouldAbstain({ bestCosine: 0.6, anyLexical: true, scoreGap: 0, termCoverage: 1, weightedCoverage: 0.95 }, 2, MODEL, idfPolicy)).toBe(false);
  });

  it("gives any model but the calibrated one the words' verdict: not stored when no candidate shares a word", () => {
    const close = { bestCosine: 0.99, anyLexical: false, scoreGap: 0, termCoverage: 1, topMatch: 1 };
    expect(shouldAbstain(close, 3, "hashing-512")).toBe(true);
    expect(shouldAbstain({ ...close, bestCosine: 0.01, anyLexical: true }, 3, "openai:text-embedding-3-small")).toBe(false);
    expect(shouldAbstain({ ...close, bestCosine: null, anyLexical: true }, 3, null)).toBe(false);
    // The calibrated model reads the cosine: the same evidence is found.
    expect(shouldAbstain(close, 3, SEARCH_POLICY.abstention.model)).toBe(false);
  });

  it("counts term coverage from the query's stored terms and clamps every signal to [0, 1]", () => {
    const ranked = rank([{ ...base, id: "a", queryTerms: { total: 4, stored: 3 } }], "q");
    expect(abstentionEvidence(ranked).termCoverage).toBeCloseTo(0.75);
    expect(abstentionEvidence(rank([{ ...base, id: "a", queryTerms: { total: 0, stored: 0 } }], "q")).termCoverage).toBeNull();
    // A signal past 1 still counts as at most 1.
    const policy = {
      ...SEARCH_POLICY,
      abstention: { model: MODEL, minEvidence: 1.5, termCoverageWeight: 0, weightedCoverageWeight: 0, topMatchWeight: 1 },
    };
    expect(shouldAbstain({ bestCosine: 0.4, anyLexical: true, scoreGap: 0, termCoverage: null, topMatch: 2 }, 2, MODEL, policy)).toBe(true);
    expect(shouldAbstain({ bestCosine: 0.6, anyLexical: true, scoreGap: 0, termCoverage: null, topMatch: 2 }, 2, MODEL, policy)).toBe(false);
  });

  it("ORs a plain query's words for the full-text leg and keeps websearch syntax as written", () => {
    expect(lexicalQueryText("why Kafka or RabbitMQ for ingest?")).toBe("why or Kafka or RabbitMQ or for or ingest?");
    expect(lexicalQueryText('"exact phrase" here')).toBe('"exact phrase" here');
    expect(lexicalQueryText("kafka -rabbitmq")).toBe("kafka -rabbitmq");
    expect(lexicalQueryText("e-bike commute")).toBe("e-bike or commute");
    expect(lexicalQueryText("why Kafka", { ...SEARCH_POLICY, lexicalMatch: "all" })).toBe("why Kafka");
  });

  it("escapes LIKE wildcards in the topic match", () => {
    expect(escapeLike("50%_off\\")).toBe("50\\%\\_off\\\\");
  });
});
