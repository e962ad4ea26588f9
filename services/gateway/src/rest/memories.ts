/**
 * /api/v1/memories: the same schemas and service calls as the remember and get_memories tools. A
 * POST may carry an Idempotency-Key header: repeating it answers 201 with the first write's memory.
 */
import { AppError } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import { MAX_GET_CONTENT_CHARS, getMemoriesInputSchema, parseInput, rememberInputSchema } from "@3ngram/schema";
import { Router, type RequestHandler } from "express";
import type { MemoryPeer } from "../clients/memory.js";
import { routeLabel } from "../http/locals.js";
import { jsonBody } from "./body.js";
import { withIdempotencyKey } from "./idempotency-key.js";
import { identityFor } from "../http/identity.js";

/** Mounted at /api/v1; `auth` runs before any body is read. */
export function memoriesRouter(memory: MemoryPeer, auth: RequestHandler): Router {
  const router = Router();

  router.post("/memories", routeLabel("POST /api/v1/memories"), auth, ...jsonBody(), async (req, res) => {
    const identity = identityFor(res, SCOPES.write);
    const input = parseInput(rememberInputSchema, withIdempotencyKey(req, req.body));
    const output = await memory.memories.remember(input, { identity });
    res.status(201).json(output);
  });

  router.get("/memories/:id", routeLabel("GET /api/v1/memories/:id"), auth, async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    // A malformed id is answered like an unknown one: the caller learns nothing either way.
    const parsed = getMemoriesInputSchema.safeParse({ ids: [req.params.id], maxContentChars: MAX_GET_CONTENT_CHARS });
    if (!parsed.success) throw notFound();
    const output = await memory.memories.getMemories(parsed.data, { identity });
    const record = output.memories[0];
    if (record === undefined) throw notFound();
    res.json(record);
  });

  return router;
}

function notFound(): AppError {
  return new AppError("not_found", "memory not found");
}
