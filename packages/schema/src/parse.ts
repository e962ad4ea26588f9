import { invalidInput } from "@3ngram/errors";
import type { z } from "zod";

/** Validates untrusted input once, at the edge that receives it; failures become invalid_input naming the field. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidInput(result.error.issues);
  return result.data;
}
