import { z } from "zod";
import { DEFAULT_SEARCH_LIMIT, MAX_QUERY_LENGTH, MAX_SEARCH_LIMIT } from "./limits.js";
import { memoryStatusSchema, memoryTypeSchema, projectSchema, scopeNameSchema } from "./memory.js";
import { outputObject } from "./open-object.js";

export const searchLegSchema = z.enum(["vector", "fts", "recency"]);
export type SearchLeg = z.infer<typeof searchLegSchema>;

export const searchInputSchema = z
  .strictObject({
    query: z.string().trim().min(1).max(MAX_QUERY_LENGTH),
    limit: z.int().min(1).max(MAX_SEARCH_LIMIT).default(DEFAULT_SEARCH_LIMIT),
    memoryType: memoryTypeSchema.optional(),
    memoryTypes: z.array(memoryTypeSchema).min(1).max(memoryTypeSchema.options.length).optional(),
    scope: scopeNameSchema.optional(),
    project: projectSchema.optional(),
    status: memoryStatusSchema.optional(),
  })
  .refine((v) => !(v.memoryType !== undefined && v.memoryTypes !== undefined), {
    message: "give memoryType or memoryTypes, not both",
    path: ["memoryTypes"],
  });
export type SearchInput = z.infer<typeof searchInputSchema>;

export const searchHitSchema = outputObject({
  id: z.string(),
  memoryType: memoryTypeSchema,
  topic: z.string(),
  content: z.string(),
  contentLength: z.int().min(0),
  truncated: z.boolean(),
  score: z.number(),
  scope: z.string(),
  project: z.string().nullable(),
  recordedAt: z.string(),
});
export type SearchHit = z.infer<typeof searchHitSchema>;

export const legCoverageSchema = outputObject({
  leg: searchLegSchema,
  available: z.boolean(),
  candidates: z.int().min(0),
});

export const coverageSchema = outputObject({
  legs: z.array(legCoverageSchema),
  poolSize: z.int().min(0),
  abstained: z.boolean(),
});
export type Coverage = z.infer<typeof coverageSchema>;

export const searchOutputSchema = outputObject({
  hits: z.array(searchHitSchema),
  count: z.int().min(0),
  hasMore: z.boolean(),
  coverage: coverageSchema,
});
export type SearchOutput = z.infer<typeof searchOutputSchema>;
