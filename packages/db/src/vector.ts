import pgvector from "pgvector";

/** pgvector's text form, '[0.1,0.2,…]', for binding a vector as a query parameter. */
export function toVectorLiteral(vector: readonly number[]): string {
  vector.forEach((x, i) => {
    if (!Number.isFinite(x)) throw new RangeError(`toVectorLiteral: element ${i} is not a finite number`);
  });
  return pgvector.toSql([...vector]) as string;
}
