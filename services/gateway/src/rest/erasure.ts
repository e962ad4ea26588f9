/**
 * Erasure over REST (docs/erasure.md); there is no MCP tool for it. Both routes need
 * memory:erase, which no key or OAuth grant holds unless it was asked for by name.
 *
 *   POST /api/v1/memories/:id/erase   { reason, reference? } → erase output for that one memory
 *                                     (unknown, foreign or malformed id → 404)
 *   POST /api/v1/erasures             { ids | selector, reason, reference?, dryRun? } → erase output
 */
import { AppError } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import { eraseInputSchema, eraseOneBodySchema, parseInput } from "@3ngram/schema";
import { Router, type RequestHandler } from "express";
import type { MemoryPeer } from "../clients/memory.js";
import { identityFor } from "../http/identity.js";
import { routeLabel } from "../http/locals.js";
import { jsonBody } from "./body.js";
import { pathId } from "./lifecycle.js";

/** Mounted at /api/v1; `auth` runs before any body is read. */
export function erasureRouter(memory: MemoryPeer, auth: RequestHandler): Router {
  const router = Router();

  router.post("/memories/:id/erase", routeLabel("POST /api/v1/memories/:id/erase"), auth, ...jsonBody(), async (req, res) => {
    const identity = identityFor(res, SCOPES.erase);
    const id = pathId(req);
    const body = parseInput(eraseOneBodySchema, req.body);
    const out = await memory.archive.erase({ ...body, ids: [id], dryRun: false }, { identity });
    // One memory: an unknown (or another tenant's) id is a 404, like every other route under /memories/:id.
    if (out.notFound.length > 0) throw new AppError("not_found", "memory not found");
    res.json(out);
  });

  router.post("/erasures", routeLabel("POST /api/v1/erasures"), auth, ...jsonBody(), async (req, res) => {
    const identity = identityFor(res, SCOPES.erase);
    const input = parseInput(eraseInputSchema, req.body);
    res.json(await memory.archive.erase(input, { identity }));
  });

  return router;
}
