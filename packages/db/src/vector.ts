import pgvector from "pgvector";

/** pgvector's text form, '[0.1,0.2,…]', for binding a vector as a query parameter. */
export function toVectorLiteral(vector: readonly number[]): string {
  vector.forEach((x, i) => {
    if (!Number.isFinite(x)) throw new RangeError(`toVectorLiteral: element ${i} is not a finite number`);
  });
  return pgvector.toSql([...vector]) as string;
}

/** Parses pgvector's text output form (`[1,2,3]`) back into numbers. */
export function parseVectorLiteral(literal: string): number[] {
  const trimmed = literal.trim();
  if (!trimmed.startsWith("[") || !trimmed.endsWith("]")) {
    throw new SyntaxError("parseVectorLiteral: expected a value of the form [x,y,...]");
  }
  const body = trimmed.slice(1, -1).trim();
  if (body === "") return [];
  return body.split(",").map((part, i) => {
    const value = Number(part.trim());
    if (part.trim() === "" || !Number.isFinite(value)) {
      throw new SyntaxError(`parseVectorLiteral: element ${i} is not a finite number`);
    }
    return value;
  });
}
