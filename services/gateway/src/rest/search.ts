/** /api/v1/search: the same schema and service call as the search tool. */
import { SCOPES } from "@3ngram/rpc";
import { parseInput, searchInputSchema } from "@3ngram/schema";
import { Router, type RequestHandler } from "express";
import type { SearchPeer } from "../clients/search.js";
import { routeLabel } from "../http/locals.js";
import { jsonBody } from "./body.js";
import { identityFor } from "../http/identity.js";

/** Mounted at /api/v1; `auth` runs before any body is read. */
export function searchRouter(search: SearchPeer, auth: RequestHandler): Router {
  const router = Router();
  router.post("/search", routeLabel("POST /api/v1/search"), auth, ...jsonBody(), async (req, res) => {
    const identity = identityFor(res, SCOPES.read);
    const input = parseInput(searchInputSchema, req.body);
    res.json(await search.search.search(input, { identity }));
  });
  return router;
}
