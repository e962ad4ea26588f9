/**
 * /api/v1/memories/:id/{revise,resolve,archive,history}: the same schemas and service calls as the
 * revise and resolve tools (archive and history are REST-only). The memory id comes from the path;
 * a malformed one is answered like an unknown one.
 */
import { AppError } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import { memoryIdSchema, parseInput, resolveInputSchema, reviseInputSchema } from "@3ngram/schema";
import { Router, type Request, type RequestHandler } from "express";
import type { MemoryPeer } from "../clients/memory.js";
import { routeLabel } from "../http/locals.js";
import { jsonBody } from "./body.js";
import { withIdempotencyKey } from "./idempotency-key.js";
import { identityFor } from "../http/identity.js";

/** Mounted at /api/v1; `auth` runs before any body is read. */
export function lifecycleRouter(memory: MemoryPeer, auth: RequestHandler): Router {
  const router = Router();

  router.post("/memories/:id/revise", routeLabel("POST /api/v1/memories/:id/revise"), auth, ...jsonBody(), async (req, res) => {
    const identity = identityFor(res, SCOPES.write);
    const predecessorId = pathId(req);
    const input = parseInput(reviseInputSchema, { ...withIdempotencyKey(req, bodyWithout(req, "predecessorId")), predecessorId });
    res.status(201).json(await memory.memories.revise(input, { identity }));
  });

  router.post("/memories/:id/resolve", routeLabel("POST /api/v1/memories/:id/resolve"), auth, ...jsonBody(), async (req, res) => {
    const identity = identityFor(res, SCOPES.write);
    const memoryId = pathId(req, "no commitment for memory");
    const input = parseInput(resolveInputSchema, { ...bodyWithout(req, "memoryId"), memoryId });
    res.json(await memory.memories.resolve(input, { identity }));
  });

  // No body: the path says everything.
  router.post("/memories/:id/archive", routeLabel("POST /api/v1/memories/:id/archive"), auth, async (req, res) => {
    const identity = identityFor(res, SCOPES.write);
    res.json(await memory.memories.archive({ memoryId: pathId(req) }, { identity }));
  });

  router.get("/memories/:id/history", routeLabel("GET /api/v1/memories/:id/history"), auth, async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    res.json(await memory.memories.getHistory({ memoryId: pathId(req) }, { identity }));
  });

  return router;
}

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
