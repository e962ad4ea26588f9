/**
 * /api/v1/memories: the same schemas and service calls as the remember and get_memories tools,
 * plus the filtered listing and its facets. A POST may carry an Idempotency-Key header: repeating
 * it answers 201 with the first write's memory. Listing query values arrive as strings, or arrays
 * when a key repeats (?project=a&project=b), which the shared schema accepts.
 */
import { AppError } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import {
  MAX_GET_CONTENT_CHARS,
  facetsOutputSchema,
  getMemoriesInputSchema,
  listMemoriesInputSchema,
  listMemoriesOutputSchema,
  memoryRecordSchema,
  parseInput,
  rememberInputSchema,
  rememberOutputSchema,
} from "@3ngram/schema";
import { IDEMPOTENCY_KEY_PARAMS, withIdempotencyKey } from "./idempotency-key.js";
import { queryOf } from "./openapi.js";
import type { RestRoute } from "./route.js";

/** In this order: GET /memories/facets comes before GET /memories/:id, so "facets" is never taken for an id. */
export const MEMORY_ROUTES: readonly RestRoute[] = [
  {
    method: "post",
    path: "/api/v1/memories",
    summary: "remember: append one typed memory",
    tag: "memories",
    scope: SCOPES.write,
    headers: IDEMPOTENCY_KEY_PARAMS,
    body: { schema: rememberInputSchema },
    answers: { 201: { description: "stored", json: rememberOutputSchema } },
    errors: [409, 422],
    handle: async ({ req, res, memory, identity }) => {
      const input = parseInput(rememberInputSchema, withIdempotencyKey(req, req.body));
      res.status(201).json(await memory.memories.remember(input, { identity }));
    },
  },
  {
    method: "get",
    path: "/api/v1/memories",
    summary: "live memories, newest first, filtered and bounded",
    tag: "memories",
    scope: SCOPES.read,
    query: queryOf(listMemoriesInputSchema, ["memoryTypes", "project"]),
    answers: { 200: { description: "one page", json: listMemoriesOutputSchema } },
    handle: async ({ req, res, memory, identity }) => {
      const input = parseInput(listMemoriesInputSchema, { ...req.query });
      res.json(await memory.memories.listMemories(input, { identity }));
    },
  },
  {
    method: "get",
    path: "/api/v1/memories/facets",
    summary: "distinct scopes and projects of live memories",
    tag: "memories",
    scope: SCOPES.read,
    answers: { 200: { description: "facets", json: facetsOutputSchema } },
    handle: async ({ res, memory, identity }) => res.json(await memory.memories.getFacets({}, { identity })),
  },
  {
    method: "get",
    path: "/api/v1/memories/:id",
    summary: `one memory, its content up to ${MAX_GET_CONTENT_CHARS} characters (truncated says when an imported one is longer)`,
    tag: "memories",
    scope: SCOPES.read,
    answers: { 200: { description: "the memory", json: memoryRecordSchema } },
    errors: [404],
    handle: async ({ req, res, memory, identity }) => {
      // A malformed id is answered like an unknown one: the caller learns nothing either way.
      const parsed = getMemoriesInputSchema.safeParse({ ids: [req.params.id], maxContentChars: MAX_GET_CONTENT_CHARS });
      if (!parsed.success) throw notFound();
      const output = await memory.memories.getMemories(parsed.data, { identity });
      const record = output.memories[0];
      if (record === undefined) throw notFound();
      res.json(record);
    },
  },
];

function notFound(): AppError {
  return new AppError("not_found", "memory not found");
}
