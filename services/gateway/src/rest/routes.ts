/**
 * Every route under /api/v1, in the order they are matched and documented. The order matters
 * once: GET /memories/facets is listed before GET /memories/:id (both in memories.ts), so "facets"
 * is never read as an id; no other two routes can match the same request.
 */
import { ARCHIVE_ROUTES } from "./archive.js";
import { ERASURE_ROUTES } from "./erasure.js";
import { FACTS_ROUTES } from "./facts.js";
import { LIFECYCLE_ROUTES } from "./lifecycle.js";
import { MEMORY_ROUTES } from "./memories.js";
import { openApiDocument } from "./openapi.js";
import { OPERATIONAL_ROUTES } from "./operational.js";
import { ORIENTATION_ROUTES } from "./orientation.js";
import { PROPOSAL_ROUTES } from "./proposals.js";
import type { Json, RestRoute } from "./route.js";
import { SCOPE_ROUTES } from "./scopes.js";
import { SEARCH_ROUTES } from "./search.js";

let document: Json | undefined;

export const API_ROUTES: readonly RestRoute[] = [
  ...MEMORY_ROUTES,
  ...LIFECYCLE_ROUTES,
  ...ERASURE_ROUTES,
  ...SEARCH_ROUTES,
  ...SCOPE_ROUTES,
  ...FACTS_ROUTES,
  ...ARCHIVE_ROUTES,
  ...ORIENTATION_ROUTES,
  ...PROPOSAL_ROUTES,
  {
    // The contract is public (it holds no tenant data), like the OAuth metadata.
    method: "get",
    path: "/api/v1/openapi.json",
    summary: "this document",
    tag: "meta",
    answers: { 200: { description: "OpenAPI 3.1", media: { type: "application/json", schema: { type: "object" } } } },
    // Assembled on first use and shared: it describes these lists, which never change.
    handle: ({ res }) => res.set("Cache-Control", "public, max-age=300").json((document ??= openApiDocument([...API_ROUTES, ...OPERATIONAL_ROUTES]))),
  },
];
