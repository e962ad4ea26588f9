import { z } from "zod";
import { commitmentRecordSchema, instantSchema, memoryRecordSchema, memoryStatusSchema, memoryTypeSchema, projectSchema, scopeNameSchema } from "./memory.js";
import { outputObject } from "./open-object.js";

const DEFAULT_LIST_LIMIT = 25;
const MAX_LIST_LIMIT = 100;

/** A value that may arrive once or repeated (?project=a&project=b). */
const oneOrMany = <T extends z.ZodType>(item: T) =>
  z.union([item, z.array(item).min(1).max(32)]).transform((v) => (Array.isArray(v) ? v : [v]) as z.output<T>[]);

/** GET /api/v1/memories: live memories, newest first, bounded. Query-string values arrive as strings. */
export const listMemoriesInputSchema = z
  .strictObject({
    type: memoryTypeSchema.optional(),
    memoryTypes: oneOrMany(memoryTypeSchema).optional(),
    scope: scopeNameSchema.optional(),
    project: oneOrMany(projectSchema).optional(),
    status: memoryStatusSchema.optional(),
    recordedAfter: instantSchema.optional(),
    recordedBefore: instantSchema.optional(),
    limit: z.coerce.number().int().min(1).max(MAX_LIST_LIMIT).default(DEFAULT_LIST_LIMIT),
    offset: z.coerce.number().int().min(0).max(100_000).default(0),
  })
  .refine((v) => !(v.type !== undefined && v.memoryTypes !== undefined), { message: "give type or memoryTypes, not both", path: ["memoryTypes"] })
  .refine((v) => v.recordedAfter === undefined || v.recordedBefore === undefined || Date.parse(v.recordedAfter) <= Date.parse(v.recordedBefore), {
    message: "recordedAfter must not be after recordedBefore",
    path: ["recordedBefore"],
  });
export type ListMemoriesInput = z.infer<typeof listMemoriesInputSchema>;

const memorySummarySchema = outputObject({
  id: z.string(),
  memoryType: memoryTypeSchema,
  topic: z.string(),
  scope: z.string(),
  project: z.string().nullable(),
  status: memoryStatusSchema,
  tags: z.array(z.string()),
  recordedAt: z.string(),
  supersededBy: z.string().nullable(),
  commitment: commitmentRecordSchema.nullable(),
});
export type MemorySummary = z.infer<typeof memorySummarySchema>;

export const listMemoriesOutputSchema = outputObject({
  memories: z.array(memorySummarySchema),
  count: z.int().min(0),
  total: z.int().min(0),
});
export type ListMemoriesOutput = z.infer<typeof listMemoriesOutputSchema>;

export const facetsOutputSchema = outputObject({
  scopes: z.array(z.string()),
  projects: z.array(z.string()),
});
export type FacetsOutput = z.infer<typeof facetsOutputSchema>;

const historyEventSchema = outputObject({
  memoryId: z.string(),
  kind: z.string(),
  actor: z.string(),
  createdAt: z.string(),
  /** Metadata only: ids, states, lengths. */
  payload: z.record(z.string(), z.unknown()).nullable(),
});

const historyEdgeSchema = outputObject({
  fromId: z.string(),
  toId: z.string(),
  edgeType: z.string(),
  recordedAt: z.string(),
});

export const historyOutputSchema = outputObject({
  memoryId: z.string(),
  lifecycleState: z.enum(["current", "superseded", "archived"]),
  /** Oldest first, ending with the current head. */
  lineage: z.array(memoryRecordSchema),
  edges: z.array(historyEdgeSchema),
  events: z.array(historyEventSchema),
});
export type HistoryOutput = z.infer<typeof historyOutputSchema>;
