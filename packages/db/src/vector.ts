import pgvector from "pgvector";

/** pgvector's text form, '[0.1,0.2,…]', for binding a vector as a query parameter. */
export function toVectorLiteral(vector: readonly number[]): string {
  for (const x of vector) if (!Number.isFinite(x)) throw new Error("vector contains a non-finite value");
  return pgvector.toSql([...vector]) as string;
}
