import { describe, expect, it } from "vitest";
import {
  SEARCH_POLICY,
  abstentionEvidence,
  candidatePoolSize,
  fusedScore,
  isShortQuery,
  lexicalQueryText,
  normaliseFts,
  rank,
  shouldAbstain,
  type CandidateFeatures,
} from "../src/domain/policy.js";
import { escapeLike } from "../src/db/candidates.js";

const base: CandidateFeatures = { cosine: 0.5, ftsRaw: 0, lexical: false, ageDays: 0, topicMatch: false, superseded: false };

describe("search policy", () => {
  it("normalises full-text rank over the matching candidates only", () => {
    const a = { ...base, lexical: true, ftsRaw: 0.1 };
    const b = { ...base, lexical: true, ftsRaw: 0.3 };
    const c = { ...base, lexical: false, ftsRaw: 0 };
    const norm = normaliseFts([a, b, c]);
    expect([norm(a), norm(b), norm(c)]).toEqual([0, 1, 0]);
    const single = normaliseFts([a]);
    expect(single(a)).toBe(1);
  });

  it("adds the topic bonus only to short queries", () => {
    const match = { ...base, topicMatch: true };
    expect(isShortQuery("alice")).toBe(true);
    expect(isShortQuery("  alice   smith ")).toBe(true);
    expect(isShortQuery("who is alice really")).toBe(false);
    expect(fusedScore(match, 0, true) - fusedScore(match, 0, false)).toBeCloseTo(SEARCH_POLICY.topicMatch.bonus);
  });

  it("lets newer memories win ties through recency", () => {
    expect(fusedScore({ ...base, ageDays: 1 }, 0, false)).toBeGreaterThan(fusedScore({ ...base, ageDays: 400 }, 0, false));
  });

  it("demotes a superseded row below an otherwise weaker successor", () => {
    const predecessor = { ...base, id: "a", cosine: 0.95, lexical: true, ftsRaw: 0.5, superseded: true };
    const successor = { ...base, id: "b", cosine: 0.6 };
    const order = rank([predecessor, successor], "a long enough query here").map((r) => r.candidate.id);
    expect(order).toEqual(["b", "a"]);
    expect(fusedScore(predecessor, 1, false)).toBeCloseTo(fusedScore({ ...predecessor, superseded: false }, 1, false) - SEARCH_POLICY.supersessionPenalty);
  });

  it("orders ties by id so the ranking is total", () => {
    const order = rank([{ ...base, id: "b" }, { ...base, id: "a" }], "q").map((r) => r.candidate.id);
    expect(order).toEqual(["a", "b"]);
  });

  it("sizes each leg's pool as max(limit × factor, floor)", () => {
    expect(candidatePoolSize(5)).toBe(50);
    expect(candidatePoolSize(25)).toBe(100);
    expect(candidatePoolSize(5, { ...SEARCH_POLICY, candidatePool: { factor: 10, floor: 20 } })).toBe(50);
  });

  it("reports the evidence the verdict uses", () => {
    const ranked = rank([{ ...base, id: "a", cosine: 0.7 }, { ...base, id: "b", cosine: 0.2, lexical: true, ftsRaw: 0.1 }], "some query words");
    const evidence = abstentionEvidence(ranked);
    expect(evidence.bestCosine).toBeCloseTo(0.7);
    expect(evidence.anyLexical).toBe(true);
    expect(evidence.scoreGap).toBeCloseTo(ranked[0]!.score - ranked[1]!.score);
    expect(abstentionEvidence([]).scoreGap).toBeNull();
    expect(abstentionEvidence(rank([{ ...base, id: "a", cosine: null }], "q")).bestCosine).toBeNull();
  });

  it("abstains when the fused evidence is weak, whatever single signal is present", () => {
    const { minEvidence, termCoverageWeight } = SEARCH_POLICY.abstention;
    const verdict = (c: CandidateFeatures[]) => shouldAbstain(abstentionEvidence(rank(c.map((x, i) => ({ ...x, id: String(i) })), "q")), c.length);
    expect(verdict([])).toBe(true);
    // A fair cosine alone is not enough: unrelated questions reach it with the offline model.
    expect(verdict([{ ...base, cosine: 0.6, queryTerms: { total: 4, stored: 1 } }, { ...base, cosine: 0.59 }])).toBe(true);
    // The same cosine with the question's words stored and a clear first hit is found.
    expect(verdict([{ ...base, cosine: 0.6, queryTerms: { total: 4, stored: 4 } }, { ...base, cosine: 0.3 }])).toBe(false);
    // Without a vector leg the threshold shrinks to the signals left: words and gap.
    expect(verdict([{ ...base, cosine: null, queryTerms: { total: 3, stored: 0 } }])).toBe(true);
    const lexicalOnly = { ...base, cosine: null, queryTerms: { total: 2, stored: 2 } };
    expect(verdict([{ ...lexicalOnly, lexical: true, ftsRaw: 0.5 }, lexicalOnly])).toBe(false);
    // Nothing measurable at all: abstain.
    expect(shouldAbstain({ bestCosine: null, anyLexical: false, scoreGap: null, termCoverage: null }, 1)).toBe(true);
    // Evidence exactly at the threshold counts as found.
    expect(shouldAbstain({ bestCosine: minEvidence - termCoverageWeight, anyLexical: true, scoreGap: 0, termCoverage: 1 }, 2)).toBe(false);
  });

  it("counts term coverage from the query's stored terms and clamps every signal to [0, 1]", () => {
    const ranked = rank([{ ...base, id: "a", queryTerms: { total: 4, stored: 3 } }], "q");
    expect(abstentionEvidence(ranked).termCoverage).toBeCloseTo(0.75);
    expect(abstentionEvidence(rank([{ ...base, id: "a", queryTerms: { total: 0, stored: 0 } }], "q")).termCoverage).toBeNull();
    // A gap over a demoted predecessor can exceed 1; it still counts as at most 1.
    const policy = { ...SEARCH_POLICY, abstention: { minEvidence: 1.5, termCoverageWeight: 0, scoreGapWeight: 1 } };
    expect(shouldAbstain({ bestCosine: 0.4, anyLexical: false, scoreGap: 2, termCoverage: null }, 2, policy)).toBe(true);
    expect(shouldAbstain({ bestCosine: 0.6, anyLexical: false, scoreGap: 2, termCoverage: null }, 2, policy)).toBe(false);
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
