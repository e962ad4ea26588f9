import { describe, expect, it } from "vitest";
import pgvector from "pgvector";
import { toVectorLiteral } from "../src/vector.js";

describe("toVectorLiteral", () => {
  it("formats pgvector text input", () => {
    expect(toVectorLiteral([0.1, 0.2, -3])).toBe("[0.1,0.2,-3]");
    expect(toVectorLiteral([-0, 1e-7])).toBe("[0,1e-7]");
    expect(toVectorLiteral([])).toBe("[]");
  });

  it("rejects values pgvector cannot store", () => {
    expect(() => toVectorLiteral([1, Number.NaN])).toThrow(RangeError);
    expect(() => toVectorLiteral([Number.POSITIVE_INFINITY])).toThrow(RangeError);
  });

  it("round-trips through pgvector's own parser exactly", () => {
    const vector = [0.123456789, -0.5, 1 / 3, 2e-10];
    expect(pgvector.fromSql(toVectorLiteral(vector))).toEqual(vector);
  });
});
