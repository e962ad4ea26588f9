/**
 * GET /api/v1/memories (filtered, newest first, bounded) and GET /api/v1/memories/facets. Mounted
 * before the memories router so "facets" is never taken for a memory id. Query values arrive as
 * strings, or arrays when a key repeats (?project=a&project=b), which the shared schema accepts.
 */
import { SCOPES } from "@3ngram/rpc";
import { listMemoriesInputSchema, parseInput } from "@3ngram/schema";
import { Router, type RequestHandler } from "express";
import type { MemoryPeer } from "../clients/memory.js";
import { routeLabel } from "../http/locals.js";
import { identityFor } from "../http/identity.js";

/** Mounted at /api/v1. */
export function memoryListingRouter(memory: MemoryPeer, auth: RequestHandler): Router {
  const router = Router();

  router.get("/memories", routeLabel("GET /api/v1/memories"), auth, async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    const input = parseInput(listMemoriesInputSchema, { ...req.query });
    res.json(await memory.memories.listMemories(input, { identity }));
  });

  router.get("/memories/facets", routeLabel("GET /api/v1/memories/facets"), auth, async (_req, res) => {
    const identity = identityFor(res, SCOPES.read);
    res.json(await memory.memories.getFacets({}, { identity }));
  });

  return router;
}
