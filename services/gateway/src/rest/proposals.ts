/**
 * /api/v1/proposals: review_proposals over REST, with the same schemas and service calls.
 *
 *   GET  /api/v1/proposals?status=&limit=    the list action (memory:read)
 *   POST /api/v1/proposals/:id/apply         accept, no body (memory:write)
 *   POST /api/v1/proposals/:id/reject        reject; optional JSON body { rationale } (memory:write)
 *
 * Answers are the tool's output. A malformed id in the path is answered like an unknown one.
 */
import { AppError } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import { listProposalsQuerySchema, parseInput, rejectProposalBodySchema, reviewProposalsInputSchema } from "@3ngram/schema";
import { Router, type Request, type RequestHandler } from "express";
import type { MemoryClient } from "../clients/memory.js";
import { reviewProposals } from "../clients/proposals.js";
import { routeLabel } from "../http/locals.js";
import { jsonBody } from "./body.js";
import { identityFor } from "./identity.js";

/** Mounted at /api/v1; `auth` runs before any body is read. */
export function proposalsRouter(memory: MemoryClient, auth: RequestHandler): Router {
  const router = Router();

  router.get("/proposals", routeLabel("GET /api/v1/proposals"), auth, async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    const query = parseInput(listProposalsQuerySchema, { ...(req.query as Record<string, unknown>) });
    res.json(await reviewProposals(memory, { action: "list", ...query }, { identity }));
  });

  router.post("/proposals/:id/apply", routeLabel("POST /api/v1/proposals/:id/apply"), auth, async (req, res) => {
    const identity = identityFor(res, SCOPES.write);
    res.json(await reviewProposals(memory, { action: "accept", proposalId: pathId(req) }, { identity }));
  });

  router.post("/proposals/:id/reject", routeLabel("POST /api/v1/proposals/:id/reject"), auth, ...optionalJsonBody(), async (req, res) => {
    const identity = identityFor(res, SCOPES.write);
    const body = parseInput(rejectProposalBodySchema, req.body ?? {});
    res.json(await reviewProposals(memory, { action: "reject", proposalId: pathId(req), ...body }, { identity }));
  });

  return router;
}

/** The path's proposal id, validated like the tool's; a malformed one reads like an unknown one. */
function pathId(req: Request): string {
  const parsed = reviewProposalsInputSchema.options[1].shape.proposalId.safeParse(req.params.id);
  if (!parsed.success) throw new AppError("not_found", "proposal not found");
  return parsed.data.toLowerCase();
}

/** A JSON body when one is sent (same rules and limits as every JSON route); none at all is fine. */
function optionalJsonBody(): RequestHandler[] {
  const [requireJson, parse] = jsonBody() as [RequestHandler, RequestHandler];
  const hasBody = (req: Request) => req.headers["transfer-encoding"] !== undefined || (req.headers["content-length"] ?? "0") !== "0";
  return [(req, res, next) => (hasBody(req) ? requireJson(req, res, next) : next()), (req, res, next) => (hasBody(req) ? parse(req, res, next) : next())];
}
