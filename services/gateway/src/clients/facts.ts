/**
 * get_facts ↔ memory.GetFacts: the one mapping between the public shapes and the wire for fact
 * reads. Optional parts stay absent on the wire (an empty range stays present: "no bounds").
 */
import { getFactsOutputSchema, type GetFactsInput, type GetFactsOutput } from "@3ngram/schema";
import type { GetFactsResponse, MemoryService } from "@3ngram/proto/memory/v1";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { toFactRecord } from "./memory.js";
import { timestampFromIso } from "./timestamps.js";

type GetFactsRequestInit = MessageInitShape<(typeof MemoryService)["method"]["getFacts"]["input"]>;

export function toGetFactsRequest(input: GetFactsInput): GetFactsRequestInit {
  const { asOf, range } = input;
  return {
    ...(input.subject !== undefined ? { subject: input.subject } : {}),
    ...(input.predicate !== undefined ? { predicate: input.predicate } : {}),
    ...(asOf !== undefined
      ? {
          asOf: {
            ...(asOf.validAt !== undefined ? { validAt: timestampFromIso(asOf.validAt) } : {}),
            ...(asOf.asKnownAt !== undefined ? { asKnownAt: timestampFromIso(asOf.asKnownAt) } : {}),
          },
        }
      : {}),
    ...(range !== undefined
      ? {
          range: {
            ...(range.from !== undefined ? { from: timestampFromIso(range.from) } : {}),
            ...(range.to !== undefined ? { to: timestampFromIso(range.to) } : {}),
          },
        }
      : {}),
    limit: input.limit,
  };
}

export function toGetFactsOutput(response: GetFactsResponse): GetFactsOutput {
  const facts = response.facts.map(toFactRecord);
  return getFactsOutputSchema.parse({ facts, count: facts.length });
}
