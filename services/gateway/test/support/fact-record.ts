/** A stored fact as the UI receives it, for page and chart tests: one value held from `validFrom` until `validTo`. */
import type { FactRecord } from "@3ngram/schema";

export function factRecord(
  value: string,
  validFrom: string,
  validTo: string | null,
  memoryId: string | null = "m",
  claim: Pick<FactRecord, "subject" | "predicate"> = { subject: "s", predicate: "p" },
): FactRecord {
  return { id: value, ...claim, value, confidence: null, validFrom, validTo, recordedAt: validFrom, memoryId };
}
