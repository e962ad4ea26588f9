import { describe, expect, it } from "vitest";

import { cosineSimilarity, l2Normalize } from "../src/cosine.js";
import { prepareText } from "../src/input.js";

describe("cosineSimilarity", () => {
  it("scores identical, orthogonal and opposite vectors", () => {
    expect(cosineSimilarity([1, 2, 3], [2, 4, 6])).toBeCloseTo(1, 12);
    expect(cosineSimilarity([1, 0], [0, 5])).toBe(0);
    expect(cosineSimilarity([1, 1], [-1, -1])).toBeCloseTo(-1, 12);
    expect(cosineSimilarity([1, 0], [1, 1])).toBeCloseTo(Math.SQRT1_2, 12);
  });

  it("returns 0 for a zero vector and throws on mismatched lengths", () => {
    expect(cosineSimilarity([0, 0], [1, 2])).toBe(0);
    expect(() => cosineSimilarity([1, 2], [1, 2, 3])).toThrow(RangeError);
  });
});

describe("l2Normalize", () => {
  it("scales to unit length and rejects zero or non-finite vectors", () => {
    const [x, y] = l2Normalize([3, 4]);
    expect(x).toBeCloseTo(0.6, 12);
    expect(y).toBeCloseTo(0.8, 12);
    expect(() => l2Normalize([0, 0])).toThrow(RangeError);
    expect(() => l2Normalize([1, Number.NaN])).toThrow(RangeError);
  });
});

describe("prepareText", () => {
  it("maps blank text to a single space and truncates long text", () => {
    expect(prepareText("")).toBe(" ");
    expect(prepareText(" \n\t")).toBe(" ");
    expect(prepareText("keep me")).toBe("keep me");
    expect(prepareText("x".repeat(9000))).toHaveLength(8000);
    expect(prepareText("abcdef", 3)).toBe("abc");
  });

  it("does not split a surrogate pair when truncating", () => {
    const text = "ab\u{1F600}cd"; // a, b, high surrogate, low surrogate, c, d
    expect(prepareText(text, 3)).toBe("ab");
    expect(prepareText(text, 4)).toBe("ab\u{1F600}");
  });
});
