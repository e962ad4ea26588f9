/** /api/v1/search: the same schema and service call as the search tool. */
import { SCOPES } from "@3ngram/rpc";
import { parseInput, searchInputSchema, searchOutputSchema } from "@3ngram/schema";
import type { RestRoute } from "./route.js";

export const SEARCH_ROUTES: readonly RestRoute[] = [
  {
    method: "post",
    path: "/api/v1/search",
    summary: "search: fused or chronological, with the coverage envelope",
    tag: "search",
    scope: SCOPES.read,
    body: { schema: searchInputSchema },
    answers: { 200: { description: "one page of hits", json: searchOutputSchema } },
    handle: async ({ req, res, search, identity }) => res.json(await search.search.search(parseInput(searchInputSchema, req.body), { identity })),
  },
];
