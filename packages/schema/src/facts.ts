import { z } from "zod";
import { factRecordSchema, instantSchema } from "./memory.js";
import { outputObject } from "./open-object.js";
import { storableText } from "./storable-text.js";

export const DEFAULT_FACTS_LIMIT = 50;
export const MAX_FACTS_LIMIT = 200;

/**
 * A point in bi-temporal time: validAt (when it was true in the world) and asKnownAt (what we had
 * recorded by then). At least one is required; an empty object is refused rather than ignored.
 */
export const asOfSchema = z
  .strictObject({ validAt: instantSchema.optional(), asKnownAt: instantSchema.optional() })
  .refine((v) => v.validAt !== undefined || v.asKnownAt !== undefined, { message: "give validAt, asKnownAt or both" });
export type AsOf = z.infer<typeof asOfSchema>;

/** A valid-time window; either end may be open. */
const timeRangeSchema = z
  .strictObject({ from: instantSchema.optional(), to: instantSchema.optional() })
  .refine((v) => v.from === undefined || v.to === undefined || Date.parse(v.from) <= Date.parse(v.to), {
    message: "from must not be after to",
    path: ["to"],
  });
export type TimeRange = z.infer<typeof timeRangeSchema>;

/**
 * get_facts: the currently valid facts for a subject (and optionally a predicate); or as of a
 * bi-temporal point; or every generation valid inside a window, oldest first.
 */
export const getFactsInputSchema = z
  .strictObject({
    subject: storableText().trim().min(1).max(256).optional(),
    predicate: storableText().trim().min(1).max(256).optional(),
    asOf: asOfSchema.optional(),
    range: timeRangeSchema.optional(),
    limit: z.int().min(1).max(MAX_FACTS_LIMIT).default(DEFAULT_FACTS_LIMIT),
  })
  .refine((v) => v.asOf === undefined || v.range === undefined, { message: "asOf and range cannot be combined", path: ["range"] });
export type GetFactsInput = z.infer<typeof getFactsInputSchema>;

export const getFactsOutputSchema = outputObject({
  facts: z.array(factRecordSchema),
  count: z.int().min(0),
});
export type GetFactsOutput = z.infer<typeof getFactsOutputSchema>;
