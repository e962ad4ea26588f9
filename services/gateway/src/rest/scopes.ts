/**
 * /api/v1/scopes: the scope registry, with the same schema and service calls as configure_scope.
 * GET lists it (with the retrieval default); POST takes any configure_scope action as its body.
 */
import { SCOPES } from "@3ngram/rpc";
import { configureScopeInputSchema, parseInput } from "@3ngram/schema";
import { Router, type RequestHandler } from "express";
import type { MemoryPeer } from "../clients/memory.js";
import { actionAccess } from "../clients/action-tools.js";
import { configureScope } from "../clients/scopes.js";
import { routeLabel } from "../http/locals.js";
import { jsonBody } from "./body.js";
import { identityFor } from "../http/identity.js";

/** Mounted at /api/v1; `auth` runs before any body is read. */
export function scopesRouter(memory: MemoryPeer, auth: RequestHandler): Router {
  const router = Router();

  router.get("/scopes", routeLabel("GET /api/v1/scopes"), auth, async (_req, res) => {
    const identity = identityFor(res, SCOPES.read);
    res.json(await configureScope({ action: "list" }, { memory, identity }));
  });

  router.post("/scopes", routeLabel("POST /api/v1/scopes"), auth, ...jsonBody(), async (req, res) => {
    const input = parseInput(configureScopeInputSchema, req.body);
    const identity = identityFor(res, actionAccess(input));
    const output = await configureScope(input, { memory, identity });
    res.status(input.action === "create" ? 201 : 200).json(output);
  });

  return router;
}
