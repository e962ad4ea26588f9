import { describe, expect, it } from "vitest";
import { SEARCH_POLICY, fusedScore, isShortQuery, normaliseFts, shouldAbstain, type CandidateFeatures } from "../src/domain/policy.js";
import { escapeLike } from "../src/db/candidates.js";

const base: CandidateFeatures = { cosine: 0.5, ftsRaw: 0, lexical: false, ageDays: 0, topicMatch: false };

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
    expect(isShortQuery("who is alice really")).toBe(false);
    expect(fusedScore(match, 0, true) - fusedScore(match, 0, false)).toBeCloseTo(SEARCH_POLICY.topicMatch.bonus);
  });

  it("lets newer memories win ties through recency", () => {
    expect(fusedScore({ ...base, ageDays: 1 }, 0, false)).toBeGreaterThan(fusedScore({ ...base, ageDays: 400 }, 0, false));
  });

  it("abstains when nothing matches lexically and vectors are weak", () => {
    expect(shouldAbstain([])).toBe(true);
    expect(shouldAbstain([{ ...base, cosine: 0.1 }])).toBe(true);
    expect(shouldAbstain([{ ...base, cosine: 0.1, lexical: true }])).toBe(false);
    expect(shouldAbstain([{ ...base, cosine: 0.9 }])).toBe(false);
  });

  it("escapes LIKE wildcards in the topic match", () => {
    expect(escapeLike("50%_off\\")).toBe("50\\%\\_off\\\\");
  });
});
