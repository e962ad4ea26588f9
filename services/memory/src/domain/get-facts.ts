import { withTenant } from "@3ngram/db";
import type { GetFactsInput } from "@3ngram/schema";
import { selectCurrentFacts, selectFactsAsOf, selectFactsInRange, type FactRow } from "../db/facts.js";
import type { Actor, MemoryDeps } from "./deps.js";

/**
 * Bi-temporal fact read, in one of three modes chosen by the input (the schema has already
 * refused asOf together with range):
 * - neither: what is true now, as known now (open generations);
 * - asOf: what was true at validAt according to what had been recorded by asKnownAt;
 * - range: every generation whose validity overlaps the window, oldest first.
 * Subject and predicate match exactly; both may be absent (the list is bounded by limit).
 */
export async function getFacts(deps: MemoryDeps, actor: Actor, input: GetFactsInput): Promise<FactRow[]> {
  const filter = { tenantId: actor.tenantId, subject: input.subject, predicate: input.predicate, limit: input.limit };
  return withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId, readOnly: true }, (db) => {
    if (input.asOf) {
      return selectFactsAsOf(db, { ...filter, validAt: dateOrNull(input.asOf.validAt), asKnownAt: dateOrNull(input.asOf.asKnownAt) });
    }
    if (input.range) {
      return selectFactsInRange(db, { ...filter, from: dateOrNull(input.range.from), to: dateOrNull(input.range.to) });
    }
    return selectCurrentFacts(db, filter);
  });
}

function dateOrNull(iso: string | undefined): Date | null {
  return iso === undefined ? null : new Date(iso);
}
