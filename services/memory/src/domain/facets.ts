import { withTenant } from "@3ngram/db";
import { selectFacets } from "../db/listing.js";
import type { Actor, MemoryDeps } from "./deps.js";

export interface Facets {
  scopes: string[];
  projects: string[];
}

/** The distinct scope and project values the tenant's live memories carry (as stored, not resolved). */
export async function getFacets(deps: MemoryDeps, actor: Actor): Promise<Facets> {
  return withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId, readOnly: true }, (db) => selectFacets(db, actor.tenantId));
}
