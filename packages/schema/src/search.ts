import { z } from "zod";
import { asOfSchema } from "./facts.js";
import { DEFAULT_SEARCH_LIMIT, MAX_QUERY_LENGTH, MAX_SEARCH_LIMIT } from "./limits.js";
import { excerptedMemoryShape, instantSchema, memoryStatusSchema, memoryTypeSchema, projectSchema, scopeNameSchema } from "./memory.js";
import { outputObject } from "./open-object.js";
import { storableText } from "./storable-text.js";

/** memoryTypes takes at most this many types (there are 8, so any subset fits). */
const MAX_MEMORY_TYPES_FILTER = 8;
/** projects takes at most this many names. */
const MAX_SEARCH_PROJECTS = 32;
/** A relevance cursor freezes at most this many ranked ids. */
export const MAX_FROZEN_CURSOR_IDS = 1000;
/** The longest cursor the server issues (a frozen pool at its bound) fits under this. */
export const MAX_CURSOR_LENGTH = 32_768;

export const searchLegSchema = z.enum(["vector", "fts", "recency"]);
export type SearchLeg = z.infer<typeof searchLegSchema>;

/** relevance: weighted fusion of the legs. chronological: every match, newest recorded first. */
const searchOrderSchema = z.enum(["relevance", "chronological"]);
export type SearchOrder = z.infer<typeof searchOrderSchema>;

/** full: hits with an excerpt and their placement. compact: id, memoryType, topic and score only. */
const searchProjectionSchema = z.enum(["full", "compact"]);
export type SearchProjection = z.infer<typeof searchProjectionSchema>;

/** The filters a caller gave (not order, limit, cursor or projection); chronological listing without a query needs one. */
const FILTER_KEYS = ["memoryType", "memoryTypes", "scope", "project", "projects", "status", "recordedAfter", "recordedBefore", "asOf"] as const;

export const searchInputSchema = z
  .strictObject({
    query: storableText().trim().min(1).max(MAX_QUERY_LENGTH).optional(),
    limit: z.int().min(1).max(MAX_SEARCH_LIMIT).default(DEFAULT_SEARCH_LIMIT),
    memoryType: memoryTypeSchema.optional(),
    memoryTypes: z.array(memoryTypeSchema).min(1).max(MAX_MEMORY_TYPES_FILTER).optional(),
    scope: scopeNameSchema.optional(),
    project: projectSchema.optional(),
    projects: z.array(projectSchema).min(1).max(MAX_SEARCH_PROJECTS).optional(),
    status: memoryStatusSchema.optional(),
    recordedAfter: instantSchema.optional(),
    recordedBefore: instantSchema.optional(),
    asOf: asOfSchema.optional(),
    order: searchOrderSchema.default("relevance"),
    cursor: storableText().min(1).max(MAX_CURSOR_LENGTH).optional(),
    projection: searchProjectionSchema.default("full"),
  })
  .superRefine((v, ctx) => {
    if (v.memoryType !== undefined && v.memoryTypes !== undefined) {
      ctx.addIssue({ code: "custom", message: "give memoryType or memoryTypes, not both", path: ["memoryTypes"] });
    }
    if (v.project !== undefined && v.projects !== undefined) {
      ctx.addIssue({ code: "custom", message: "give project or projects, not both", path: ["projects"] });
    }
    if (v.recordedAfter !== undefined && v.recordedBefore !== undefined && Date.parse(v.recordedAfter) > Date.parse(v.recordedBefore)) {
      ctx.addIssue({ code: "custom", message: "recordedAfter must not be after recordedBefore", path: ["recordedBefore"] });
    }
    if (v.query === undefined) {
      if (v.order === "relevance") {
        ctx.addIssue({ code: "custom", message: 'required (or use order: "chronological" with at least one filter)', path: ["query"] });
      } else if (!FILTER_KEYS.some((k) => v[k] !== undefined)) {
        ctx.addIssue({
          code: "custom",
          message: "a chronological listing needs a query or at least one filter (memoryType(s), scope, project(s), status, recordedAfter/Before, asOf)",
          path: ["query"],
        });
      }
    }
  });
export type SearchInput = z.infer<typeof searchInputSchema>;

const searchHitSchema = outputObject({ ...excerptedMemoryShape, score: z.number() });
export type SearchHit = z.infer<typeof searchHitSchema>;

const compactSearchHitSchema = outputObject({
  id: z.string(),
  memoryType: memoryTypeSchema,
  topic: z.string(),
  score: z.number(),
});
export type CompactSearchHit = z.infer<typeof compactSearchHitSchema>;

const legCoverageSchema = outputObject({
  leg: searchLegSchema,
  available: z.boolean(),
  candidates: z.int().min(0),
});

/** The filters an answer was narrowed by, as applied (status null: any status). */
const appliedFiltersSchema = outputObject({
  memoryTypes: z.array(memoryTypeSchema),
  scope: z.string().nullable(),
  projects: z.array(z.string()),
  status: memoryStatusSchema.nullable(),
  recordedAfter: z.string().nullable(),
  recordedBefore: z.string().nullable(),
});
export type AppliedFilters = z.infer<typeof appliedFiltersSchema>;

/** What the abstained verdict was decided from, so it can be explained and calibrated. */
const abstentionEvidenceSchema = outputObject({
  bestCosine: z.number().nullable(),
  anyLexical: z.boolean(),
  scoreGap: z.number().nullable(),
  /** Share of the query's search terms stored in any eligible memory (null: not measured). */
  termCoverage: z.number().nullable(),
});
export type AbstentionEvidence = z.infer<typeof abstentionEvidenceSchema>;

const coverageSchema = outputObject({
  order: searchOrderSchema,
  legs: z.array(legCoverageSchema),
  filters: appliedFiltersSchema,
  appliedScope: z.string().nullable(),
  asOf: outputObject({ validAt: z.string().optional(), asKnownAt: z.string().optional() }).nullable(),
  /** Distinct ranked candidates the pages walk; null in chronological order (the listing is exhaustive). */
  poolSize: z.int().min(0).nullable(),
  hasMore: z.boolean(),
  abstained: z.boolean(),
  evidence: abstentionEvidenceSchema,
});
export type Coverage = z.infer<typeof coverageSchema>;

export const searchOutputSchema = outputObject({
  /** One projection per page: every hit is full, or every hit is compact. */
  hits: z.union([z.array(searchHitSchema), z.array(compactSearchHitSchema)]),
  count: z.int().min(0),
  hasMore: z.boolean(),
  /** Present exactly when hasMore is true; pass it back with the same query and filters. */
  nextCursor: z.string().optional(),
  /** Present when the retrieval default narrowed an unscoped search. */
  appliedScope: z.string().optional(),
  coverage: coverageSchema,
});
export type SearchOutput = z.infer<typeof searchOutputSchema>;
