/**
 * Each RPC's public shapes: the request its caller sends (the service validates it, at its trust
 * boundary) and the response it answers. The proto messages are designed so their JSON mapping is
 * exactly these shapes, so the gRPC bridge (@3ngram/rpc bridge.ts) converts every RPC with one
 * generic function per direction (docs/adr/0029-one-bridge-between-proto-and-public-shapes.md).
 * The round-trip test walks every method of each service and fails on one missing here.
 */
import { z } from "zod";
import { getFactsInputSchema, getFactsOutputSchema } from "./facts.js";
import { historyOutputSchema } from "./listing.js";
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
import { searchInputSchema, searchOutputSchema } from "./search.js";
import { memoryResourceSchema } from "./surface.js";

/** A request naming one memory. */
export const memoryIdRequestSchema = z.strictObject({ memoryId: memoryIdSchema });

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
