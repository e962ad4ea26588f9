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
import { eraseInputSchema, eraseOneBodySchema, eraseOutputSchema, parseInput } from "@3ngram/schema";
import { pathId } from "./lifecycle.js";
import type { RestRoute } from "./route.js";

export const ERASURE_ROUTES: readonly RestRoute[] = [
  {
    method: "post",
    path: "/api/v1/memories/:id/erase",
    summary: "erase one memory's text and everything derived from it",
    tag: "erasure",
    scope: SCOPES.erase,
    body: { schema: eraseOneBodySchema },
    answers: { 200: { description: "erased", json: eraseOutputSchema } },
    errors: [404],
    handle: async ({ req, res, memory, identity }) => {
      const id = pathId(req);
      const body = parseInput(eraseOneBodySchema, req.body);
      const out = await memory.archive.erase({ ...body, ids: [id], dryRun: false }, { identity });
      // One memory: an unknown (or another tenant's) id is a 404, like every other route under /memories/:id.
      if (out.notFound.length > 0) throw new AppError("not_found", "memory not found");
      res.json(out);
    },
  },
  {
    method: "post",
    path: "/api/v1/erasures",
    summary: "erase memories by ids or a selector (dry run first)",
    tag: "erasure",
    scope: SCOPES.erase,
    body: { schema: eraseInputSchema },
    answers: { 200: { description: "what was (or would be) erased", json: eraseOutputSchema } },
    handle: async ({ req, res, memory, identity }) => res.json(await memory.archive.erase(parseInput(eraseInputSchema, req.body), { identity })),
  },
];
