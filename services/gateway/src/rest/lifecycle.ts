/**
 * /api/v1/memories/:id/{revise,resolve,archive,history}: the same schemas and service calls as the
 * revise and resolve tools (archive and history are REST-only). The memory id comes from the path;
 * a malformed one is answered like an unknown one.
 */
import { AppError } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import {
  archiveOutputSchema,
  historyOutputSchema,
  memoryIdSchema,
  parseInput,
  resolveInputSchema,
  resolveOutputSchema,
  reviseInputSchema,
  reviseOutputSchema,
} from "@3ngram/schema";
import type { Request } from "express";
import { IDEMPOTENCY_KEY_PARAMS, withIdempotencyKey } from "./idempotency-key.js";
import type { RestRoute } from "./route.js";

export const LIFECYCLE_ROUTES: readonly RestRoute[] = [
  {
    method: "post",
    path: "/api/v1/memories/:id/revise",
    summary: "revise: a successor linked to this memory",
    tag: "lifecycle",
    scope: SCOPES.write,
    headers: IDEMPOTENCY_KEY_PARAMS,
    body: { schema: reviseInputSchema, omit: ["predecessorId"] },
    answers: { 201: { description: "the successor", json: reviseOutputSchema } },
    errors: [404, 409, 422],
    handle: async ({ req, res, memory, identity }) => {
      const predecessorId = pathId(req);
      const input = parseInput(reviseInputSchema, { ...withIdempotencyKey(req, bodyWithout(req, "predecessorId")), predecessorId });
      res.status(201).json(await memory.memories.revise(input, { identity }));
    },
  },
  {
    method: "post",
    path: "/api/v1/memories/:id/resolve",
    summary: "resolve: move a commitment (or archive a blocker)",
    tag: "lifecycle",
    scope: SCOPES.write,
    body: { schema: resolveInputSchema, omit: ["memoryId"] },
    answers: { 200: { description: "the move", json: resolveOutputSchema } },
    errors: [404, 409],
    handle: async ({ req, res, memory, identity }) => {
      const memoryId = pathId(req, "no commitment for memory");
      const input = parseInput(resolveInputSchema, { ...bodyWithout(req, "memoryId"), memoryId });
      res.json(await memory.memories.resolve(input, { identity }));
    },
  },
  {
    // No body: the path says everything.
    method: "post",
    path: "/api/v1/memories/:id/archive",
    summary: "archive a live memory",
    tag: "lifecycle",
    scope: SCOPES.write,
    answers: { 200: { description: "archived", json: archiveOutputSchema } },
    errors: [404, 409],
    handle: async ({ req, res, memory, identity }) => res.json(await memory.memories.archive({ memoryId: pathId(req) }, { identity })),
  },
  {
    method: "get",
    path: "/api/v1/memories/:id/history",
    summary: "lineage, edges and audit events",
    tag: "lifecycle",
    scope: SCOPES.read,
    answers: { 200: { description: "the history", json: historyOutputSchema } },
    errors: [404],
    handle: async ({ req, res, memory, identity }) => res.json(await memory.memories.getHistory({ memoryId: pathId(req) }, { identity })),
  },
];

/**
 * The path's memory id. A malformed one is not_found with the wording the service uses for an
 * unknown id (the caller's text is not echoed back).
 */
export function pathId(req: Request, notFound = "memory not found"): string {
  const parsed = memoryIdSchema.safeParse(req.params.id);
  if (!parsed.success) throw new AppError("not_found", notFound);
  return parsed.data;
}

/** The JSON body as an object, refusing the field the path already supplies. */
function bodyWithout(req: Request, fromPath: string): Record<string, unknown> {
  const body: unknown = req.body;
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new AppError("invalid_input", "body: must be a JSON object", { field: "body" });
  }
  if (Object.hasOwn(body, fromPath)) {
    throw new AppError("invalid_input", `${fromPath}: comes from the path, not the body`, { field: fromPath });
  }
  return body as Record<string, unknown>;
}
