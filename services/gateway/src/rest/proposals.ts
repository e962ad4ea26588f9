/**
 * /api/v1/proposals: review_proposals over REST, with the same schemas and service calls.
 *
 *   GET  /api/v1/proposals?status=&limit=    the list action (memory:read)
 *   POST /api/v1/proposals/:id/apply         accept, no body (memory:write)
 *   POST /api/v1/proposals/:id/reject        reject; optional JSON body { rationale } (memory:write)
 *
 * Answers are the tool's output. A malformed id in the path is answered like an unknown one.
 */
import { SCOPES } from "@3ngram/rpc";
import { listProposalsQuerySchema, parseInput, rejectProposalBodySchema } from "@3ngram/schema";
import { Router, type Request, type RequestHandler } from "express";
import type { MemoryPeer } from "../clients/memory.js";
import { proposalIdFromPath, reviewProposals } from "../clients/proposals.js";
import { routeLabel } from "../http/locals.js";
import { jsonBody } from "./body.js";
import { identityFor } from "../http/identity.js";

/** Mounted at /api/v1; `auth` runs before any body is read. */
export function proposalsRouter(memory: MemoryPeer, auth: RequestHandler): Router {
  const router = Router();

  router.get("/proposals", routeLabel("GET /api/v1/proposals"), auth, async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    const query = parseInput(listProposalsQuerySchema, { ...(req.query as Record<string, unknown>) });
    res.json(await reviewProposals({ action: "list", ...query }, { memory, identity }));
  });

  router.post("/proposals/:id/apply", routeLabel("POST /api/v1/proposals/:id/apply"), auth, async (req, res) => {
    const identity = identityFor(res, SCOPES.write);
    res.json(await reviewProposals({ action: "accept", proposalId: proposalIdFromPath(req.params.id) }, { memory, identity }));
  });

  router.post("/proposals/:id/reject", routeLabel("POST /api/v1/proposals/:id/reject"), auth, ...optionalJsonBody(), async (req, res) => {
    const identity = identityFor(res, SCOPES.write);
    const body = parseInput(rejectProposalBodySchema, req.body ?? {});
    res.json(await reviewProposals({ action: "reject", proposalId: proposalIdFromPath(req.params.id), ...body }, { memory, identity }));
  });

  return router;
}

/** A JSON body when one is sent (same rules and limits as every JSON route); none at all is fine. */
function optionalJsonBody(): RequestHandler[] {
  const [requireJson, parse] = jsonBody() as [RequestHandler, RequestHandler];
  const hasBody = (req: Request) => req.headers["transfer-encoding"] !== undefined || (req.headers["content-length"] ?? "0") !== "0";
  return [(req, res, next) => (hasBody(req) ? requireJson(req, res, next) : next()), (req, res, next) => (hasBody(req) ? parse(req, res, next) : next())];
}
