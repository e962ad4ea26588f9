import { describe, expect, it } from "vitest";
import { parseVectorLiteral, toVectorLiteral } from "../src/vector.js";

describe("toVectorLiteral / parseVectorLiteral", () => {
  it("formats pgvector text input", () => {
    expect(toVectorLiteral([0.1, 0.2, -3])).toBe("[0.1,0.2,-3]");
    expect(toVectorLiteral([-0, 1e-7])).toBe("[0,1e-7]");
    expect(toVectorLiteral([])).toBe("[]");
  });

  it("rejects values pgvector cannot store", () => {
    expect(() => toVectorLiteral([1, Number.NaN])).toThrow(RangeError);
    expect(() => toVectorLiteral([Number.POSITIVE_INFINITY])).toThrow(RangeError);
  });

  it("round-trips through the text form exactly", () => {
    const vector = [0.123456789, -0.5, 1 / 3, 2e-10];
    expect(parseVectorLiteral(toVectorLiteral(vector))).toEqual(vector);
    expect(parseVectorLiteral(" [1, 2.5 ,3] ")).toEqual([1, 2.5, 3]);
    expect(parseVectorLiteral("[]")).toEqual([]);
    expect(() => parseVectorLiteral("1,2")).toThrow(SyntaxError);
    expect(() => parseVectorLiteral("[1,,2]")).toThrow(SyntaxError);
  });
});
