import type { GetFactsRequest, MemoryService } from "@3ngram/proto/memory/v1";
import { SCOPES, type Handlers, type Policies } from "@3ngram/rpc";
import { getFactsInputSchema, parseInput } from "@3ngram/schema";
import type { MemoryDeps } from "../domain/deps.js";
import { getFacts } from "../domain/get-facts.js";
import { actorOf, isoFromTimestamp, toProtoFact } from "./mappers.js";

// Bi-temporal fact reads.
type FactMethods = "getFacts";

export function factHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, FactMethods> {
  return {
    async getFacts(request, ctx) {
      const input = parseInput(getFactsInputSchema, getFactsFieldsFromProto(request));
      const facts = await getFacts(deps, actorOf(ctx), input);
      return { facts: facts.map(toProtoFact) };
    },
  };
}

export const factPolicies: Pick<Policies<typeof MemoryService>, FactMethods> = {
  getFacts: { anyScope: [SCOPES.read], tenant: true },
};

/**
 * proto GetFactsRequest → the plain object the shared zod schema validates. Absent fields stay
 * absent (an asOf or range message that is present but empty stays present, so the schema judges
 * it); limit 0 is proto3's "not given" and means the default.
 */
function getFactsFieldsFromProto(request: GetFactsRequest): Record<string, unknown> {
  const { asOf, range } = request;
  return {
    ...(request.subject !== undefined ? { subject: request.subject } : {}),
    ...(request.predicate !== undefined ? { predicate: request.predicate } : {}),
    ...(asOf
      ? {
          asOf: {
            ...(asOf.validAt ? { validAt: isoFromTimestamp(asOf.validAt) } : {}),
            ...(asOf.asKnownAt ? { asKnownAt: isoFromTimestamp(asOf.asKnownAt) } : {}),
          },
        }
      : {}),
    ...(range
      ? {
          range: {
            ...(range.from ? { from: isoFromTimestamp(range.from) } : {}),
            ...(range.to ? { to: isoFromTimestamp(range.to) } : {}),
          },
        }
      : {}),
    ...(request.limit !== 0 ? { limit: request.limit } : {}),
  };
}
