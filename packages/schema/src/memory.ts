import { z } from "zod";
import {
  DEFAULT_GET_CONTENT_CHARS,
  DEFAULT_SCOPE,
  MAX_CONTENT_LENGTH,
  MAX_GET_CONTENT_CHARS,
  MAX_GET_MEMORIES_IDS,
  MAX_GET_TOTAL_CHARS,
  MAX_PROJECT_LENGTH,
  MAX_SCOPE_LENGTH,
  MAX_TAG_LENGTH,
  MAX_TAGS,
  MAX_TOPIC_LENGTH,
  MIN_GET_CONTENT_CHARS,
  SCOPE_NAME_PATTERN,
} from "./limits.js";
import { outputObject } from "./open-object.js";

export const memoryTypeSchema = z.enum(["decision", "commitment", "blocker", "fact", "preference", "pattern", "note", "event"]);
export type MemoryType = z.infer<typeof memoryTypeSchema>;
export const MEMORY_TYPES = memoryTypeSchema.options;

export const memoryStatusSchema = z.enum(["active", "archived"]);
export type MemoryStatus = z.infer<typeof memoryStatusSchema>;
export const MEMORY_STATUSES = memoryStatusSchema.options;

export const embeddingStateSchema = z.enum(["done", "pending"]);
export type EmbeddingState = z.infer<typeof embeddingStateSchema>;

export const memoryIdSchema = z.uuid({ message: "must be a memory id (UUID)" });

export const scopeNameSchema = z
  .string()
  .trim()
  .min(1)
  .max(MAX_SCOPE_LENGTH)
  .regex(SCOPE_NAME_PATTERN, { message: "must be kebab-case: lower-case letters, digits and hyphens" });

export const projectSchema = z.string().trim().min(1).max(MAX_PROJECT_LENGTH);
export const topicSchema = z.string().trim().min(1).max(MAX_TOPIC_LENGTH);
export const contentSchema = z.string().trim().min(1).max(MAX_CONTENT_LENGTH);
export const tagsSchema = z.array(z.string().trim().min(1).max(MAX_TAG_LENGTH)).max(MAX_TAGS);

/** remember: one typed atom of memory. */
export const rememberInputSchema = z.strictObject({
  memoryType: memoryTypeSchema,
  topic: topicSchema,
  content: contentSchema,
  scope: scopeNameSchema.default(DEFAULT_SCOPE),
  project: projectSchema.optional(),
  tags: tagsSchema.default([]),
});
export type RememberInput = z.infer<typeof rememberInputSchema>;

export const memoryRefSchema = outputObject({
  id: z.string(),
  memoryType: memoryTypeSchema,
  topic: z.string(),
  scope: z.string(),
  project: z.string().nullable(),
});

export const rememberOutputSchema = outputObject({
  memory: memoryRefSchema,
  embedded: embeddingStateSchema,
});
export type RememberOutput = z.infer<typeof rememberOutputSchema>;

/** get_memories: batched full-content read, bounded per item and in aggregate. */
export const getMemoriesInputSchema = z
  .strictObject({
    ids: z.array(memoryIdSchema).min(1).max(MAX_GET_MEMORIES_IDS),
    maxContentChars: z.int().min(MIN_GET_CONTENT_CHARS).max(MAX_GET_CONTENT_CHARS).default(DEFAULT_GET_CONTENT_CHARS),
  })
  .refine((v) => v.ids.length * v.maxContentChars <= MAX_GET_TOTAL_CHARS, {
    message: `ids × maxContentChars must not exceed ${MAX_GET_TOTAL_CHARS}`,
    path: ["maxContentChars"],
  });
export type GetMemoriesInput = z.infer<typeof getMemoriesInputSchema>;

export const memoryRecordSchema = outputObject({
  id: z.string(),
  memoryType: memoryTypeSchema,
  topic: z.string(),
  content: z.string(),
  contentLength: z.int().min(0),
  truncated: z.boolean(),
  scope: z.string(),
  project: z.string().nullable(),
  status: memoryStatusSchema,
  tags: z.array(z.string()),
  validFrom: z.string(),
  validTo: z.string().nullable(),
  recordedAt: z.string(),
  embedded: embeddingStateSchema,
});
export type MemoryRecord = z.infer<typeof memoryRecordSchema>;

export const getMemoriesOutputSchema = outputObject({
  memories: z.array(memoryRecordSchema),
  count: z.int().min(0),
  notFound: z.array(z.string()),
});
export type GetMemoriesOutput = z.infer<typeof getMemoriesOutputSchema>;
