/**
 * The binary form of a query vector reaches pgvector as the same vector as the text form: every
 * element, the dimension check of a typed cast, and the distances computed from it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/support/database.js";
import { createPool, type Pool } from "../src/index.js";
import { fromVectorBinary, toVectorBinary, toVectorLiteral } from "../src/vector.js";

describe("toVectorBinary", () => {
  let db: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    db = await createTestDatabase("vectorbinary");
    pool = createPool({ connectionString: db.url, max: 1, applicationName: "db-test" });
    await pool.query("CREATE EXTENSION IF NOT EXISTS vector");
  });

  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  it("binds the vector its text form binds, to the last float4 bit", async () => {
    // Float4-exact values (what a model emits) and ones that need rounding.
    const vectors = [Array.from({ length: 512 }, (_, i) => Math.fround(Math.sin(i + 1) / 7)), [0.1, -1 / 3, 2e-10, 123456.789, -0, 1]];
    for (const vector of vectors) {
      const { rows } = await pool.query<{ fromBinary: string; same: boolean; distance: number }>(
        `SELECT $1::vector::text AS "fromBinary", $1::vector = $2::vector AS same, ($1::vector <=> $2::vector)::float8 AS distance`,
        [toVectorBinary(vector), toVectorLiteral(vector)],
      );
      expect(rows[0]).toMatchObject({ same: true, distance: 0 });
      expect(rows[0]!.fromBinary).toBe((await pool.query<{ t: string }>("SELECT $1::vector::text AS t", [toVectorLiteral(vector)])).rows[0]!.t);
    }
  });

  it("is checked against a typed cast's dimension like the text form", async () => {
    await expect(pool.query("SELECT $1::vector(4)", [toVectorBinary([1, 2, 3])])).rejects.toThrow(/expected 4 dimensions, not 3/);
    expect((await pool.query<{ n: number }>("SELECT vector_dims($1::vector(3)) AS n", [toVectorBinary([1, 2, 3])])).rows[0]!.n).toBe(3);
  });

  it("rejects values pgvector cannot store", () => {
    expect(() => toVectorBinary([1, Number.NaN])).toThrow(RangeError);
    expect(() => toVectorBinary([Number.POSITIVE_INFINITY])).toThrow(RangeError);
    // Finite as a double, infinite as a float4.
    expect(() => toVectorBinary([1e39])).toThrow(RangeError);
    expect(() => toVectorBinary(new Array<number>(16_001).fill(0))).toThrow(RangeError);
  });

  it("reads back what vector_send answers, element for element", async () => {
    const stored = [0.1, -1 / 3, 2e-10, 123456.789, 0, 1];
    const { rows } = await pool.query<{ sent: Buffer }>("SELECT vector_send($1::vector) AS sent", [toVectorLiteral(stored)]);
    expect(Array.from(fromVectorBinary(rows[0]!.sent))).toEqual(stored.map((x) => Math.fround(x)));
    expect(Array.from(fromVectorBinary(toVectorBinary([3, -4])))).toEqual([3, -4]);
  });

  it("refuses a binary form whose length does not match its header", () => {
    expect(() => fromVectorBinary(Buffer.from([0, 2, 0, 0, 0, 0, 0, 0]))).toThrow(RangeError);
    expect(() => fromVectorBinary(Buffer.from([0]))).toThrow(RangeError);
  });
});
