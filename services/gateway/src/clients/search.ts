/**
 * The search service as the gateway sees it: a typed gRPC client plus the single mapping between
 * its proto messages and the public zod shapes (hit content is the bounded excerpt; a compact
 * page carries only id, memoryType, topic and score).
 */
import { AppError } from "@3ngram/errors";
import { SearchService, type Coverage as ProtoCoverage, type SearchHit as ProtoHit, type SearchResponse } from "@3ngram/proto/search/v1";
import type { CredentialSigner, RpcClient } from "@3ngram/rpc";
import { createRpcClient } from "@3ngram/rpc";
import {
  compactSearchHitSchema,
  coverageSchema,
  searchHitSchema,
  searchOutputSchema,
  type CompactSearchHit,
  type Coverage,
  type SearchHit,
  type SearchInput,
  type SearchOutput,
} from "@3ngram/schema";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { isoTime, isoTimeOrNull, timestampFromIso } from "./timestamps.js";

export type SearchClient = RpcClient<typeof SearchService>;

export function createSearchClient(address: string, signer: CredentialSigner): SearchClient {
  return createRpcClient(SearchService, { address, audience: "search", signer });
}

type SearchRequestInit = MessageInitShape<(typeof SearchService)["method"]["search"]["input"]>;

/** Validated search input → the wire request (one project or several both travel as projects). */
export function toSearchRequest(input: SearchInput): SearchRequestInit {
  const memoryTypes = input.memoryTypes ?? (input.memoryType !== undefined ? [input.memoryType] : []);
  return {
    ...(input.query !== undefined ? { query: input.query } : {}),
    limit: input.limit,
    memoryTypes,
    ...(input.scope !== undefined ? { scope: input.scope } : {}),
    projects: input.projects ?? (input.project !== undefined ? [input.project] : []),
    ...(input.status !== undefined ? { status: input.status } : {}),
    ...(input.recordedAfter !== undefined ? { recordedAfter: timestampFromIso(input.recordedAfter) } : {}),
    ...(input.recordedBefore !== undefined ? { recordedBefore: timestampFromIso(input.recordedBefore) } : {}),
    ...(input.asOf !== undefined
      ? {
          asOf: {
            ...(input.asOf.validAt !== undefined ? { validAt: timestampFromIso(input.asOf.validAt) } : {}),
            ...(input.asOf.asKnownAt !== undefined ? { asKnownAt: timestampFromIso(input.asOf.asKnownAt) } : {}),
          },
        }
      : {}),
    order: input.order,
    ...(input.cursor !== undefined ? { cursor: input.cursor } : {}),
    projection: input.projection,
  };
}

/** One ranked hit → the public full hit. */
export function toHit(hit: ProtoHit): SearchHit {
  return searchHitSchema.parse({
    id: hit.id,
    memoryType: hit.memoryType,
    topic: hit.topic,
    content: hit.excerpt,
    contentLength: hit.contentLength,
    truncated: hit.truncated,
    score: hit.score,
    scope: hit.scope,
    project: hit.project ?? null,
    recordedAt: isoTime(hit.recordedAt, "recorded_at"),
  });
}

/** One ranked hit → the public compact hit. */
function toCompactHit(hit: ProtoHit): CompactSearchHit {
  return compactSearchHitSchema.parse({ id: hit.id, memoryType: hit.memoryType, topic: hit.topic, score: hit.score });
}

export function toCoverage(coverage: ProtoCoverage | undefined): Coverage {
  if (coverage === undefined || coverage.filters === undefined || coverage.evidence === undefined) {
    throw new AppError("internal_error", "search service returned no coverage");
  }
  const { filters, evidence, asOf } = coverage;
  return coverageSchema.parse({
    order: coverage.order,
    legs: coverage.legs.map((l) => ({ leg: l.leg, available: l.available, candidates: l.candidates })),
    filters: {
      memoryTypes: filters.memoryTypes,
      scope: filters.scope ?? null,
      projects: filters.projects,
      status: filters.status ?? null,
      recordedAfter: isoTimeOrNull(filters.recordedAfter),
      recordedBefore: isoTimeOrNull(filters.recordedBefore),
    },
    appliedScope: coverage.appliedScope ?? null,
    asOf: asOf
      ? {
          ...(asOf.validAt ? { validAt: isoTime(asOf.validAt, "as_of.valid_at") } : {}),
          ...(asOf.asKnownAt ? { asKnownAt: isoTime(asOf.asKnownAt, "as_of.as_known_at") } : {}),
        }
      : null,
    poolSize: coverage.poolSize ?? null,
    hasMore: coverage.hasMore,
    abstained: coverage.abstained,
    evidence: {
      bestCosine: evidence.bestCosine ?? null,
      anyLexical: evidence.anyLexical,
      scoreGap: evidence.scoreGap ?? null,
      termCoverage: evidence.termCoverage ?? null,
    },
  });
}

export function toSearchOutput(response: SearchResponse): SearchOutput {
  const hits = response.projection === "compact" ? response.hits.map(toCompactHit) : response.hits.map(toHit);
  const coverage = toCoverage(response.coverage);
  return searchOutputSchema.parse({
    hits,
    count: hits.length,
    hasMore: response.hasMore,
    ...(response.nextCursor !== undefined ? { nextCursor: response.nextCursor } : {}),
    ...(coverage.appliedScope !== null ? { appliedScope: coverage.appliedScope } : {}),
    coverage,
  });
}
