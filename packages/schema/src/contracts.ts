/**
 * Each RPC's public shapes: the request its caller sends (the service validates it, at its trust
 * boundary) and the response it answers. The proto messages are designed so their JSON mapping is
 * exactly these shapes, so the gRPC bridge (@3ngram/rpc bridge.ts) converts every RPC with one
 * generic function per direction (docs/adr/0029-one-bridge-between-proto-and-public-shapes.md).
 * The round-trip test walks every method of each service and fails on one missing here.
 */
import { z } from "zod";
import { getFactsInputSchema, getFactsOutputSchema } from "./facts.js";
import { facetsOutputSchema, historyOutputSchema, listMemoriesInputSchema, listMemoriesOutputSchema } from "./listing.js";
import {
  archiveOutputSchema,
  memoryTypeSchema,
  getMemoriesInputSchema,
  getMemoriesOutputSchema,
  memoryIdSchema,
  rememberInputSchema,
  rememberOutputSchema,
  resolveInputSchema,
  resolveOutputSchema,
  reviseInputSchema,
  reviseOutputSchema,
} from "./memory.js";
import { outputObject } from "./open-object.js";
import { retrievalPolicySchema, scopeActionFields, scopeRecordSchema, setRetrievalDefaultInputSchema } from "./scopes.js";
import { searchInputSchema, searchOutputSchema } from "./search.js";
import { memoryResourceSchema } from "./surface.js";

/** A request naming one memory. */
export const memoryIdRequestSchema = z.strictObject({ memoryId: memoryIdSchema });

const empty = z.strictObject({});
const oneScope = outputObject({ scope: scopeRecordSchema });

/** MemoryService, by protobuf-es method name. */
export const memoryContract = {
  remember: { request: rememberInputSchema, response: rememberOutputSchema },
  getMemories: { request: getMemoriesInputSchema, response: getMemoriesOutputSchema },
  revise: { request: reviseInputSchema, response: reviseOutputSchema },
  resolve: { request: resolveInputSchema, response: resolveOutputSchema },
  archive: { request: memoryIdRequestSchema, response: archiveOutputSchema },
  getHistory: { request: memoryIdRequestSchema, response: historyOutputSchema },
  getFacts: { request: getFactsInputSchema, response: getFactsOutputSchema },
  readMemory: { request: z.strictObject({ id: memoryIdSchema }), response: memoryResourceSchema },
  listMemories: { request: listMemoriesInputSchema, response: listMemoriesOutputSchema },
  getFacets: { request: empty, response: facetsOutputSchema },
  listScopes: { request: empty, response: outputObject({ scopes: z.array(scopeRecordSchema), count: z.int().min(0), policy: retrievalPolicySchema }) },
  createScope: { request: z.strictObject(scopeActionFields.create), response: oneScope },
  renameScope: { request: z.strictObject(scopeActionFields.rename), response: oneScope },
  setScopeAliases: { request: z.strictObject(scopeActionFields.set_aliases), response: oneScope },
  setScopeMappings: { request: z.strictObject(scopeActionFields.set_mappings), response: oneScope },
  deleteScope: { request: z.strictObject(scopeActionFields.delete), response: outputObject({ name: z.string(), policy: retrievalPolicySchema }) },
  setRetrievalDefault: { request: setRetrievalDefaultInputSchema, response: outputObject({ policy: retrievalPolicySchema }) },
} as const;

/** The consolidator's similar-pair scan (internal:consolidate). limit's ceiling is the scan policy's, checked by the search service. */
export const similarPairsRequestSchema = z.strictObject({ limit: z.int().min(1).optional() });
export const similarPairsResponseSchema = outputObject({
  pairs: z.array(
    outputObject({
      newerId: z.string(),
      olderId: z.string(),
      newerType: memoryTypeSchema,
      olderType: memoryTypeSchema,
      similarity: z.number(),
      band: z.enum(["near_duplicate", "related"]),
      threshold: z.number(),
    }),
  ),
  scanned: z.int().min(0),
  model: z.string(),
});

/** SearchService, by protobuf-es method name. */
export const searchContract = {
  search: { request: searchInputSchema, response: searchOutputSchema },
  similarPairs: { request: similarPairsRequestSchema, response: similarPairsResponseSchema },
} as const;
