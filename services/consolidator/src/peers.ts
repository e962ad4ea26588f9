/**
 * The memory and search services as the consolidator holds them: one peer each, connected once by
 * the composition (server.ts) and handed to every job. Each RPC takes and answers the public shapes
 * of @3ngram/schema (the bridge converts, docs/adr/0029), so a job calls it as it is:
 * `memory.maintenance.listTenants(request, { identity })`.
 */
import { memoryServices } from "@3ngram/proto/memory/v1";
import { searchServices } from "@3ngram/proto/search/v1";
import { connectPeer, type CredentialSigner, type Peer } from "@3ngram/rpc";
import { memoryContracts, searchContracts } from "@3ngram/schema";

export type MemoryPeer = Peer<typeof memoryServices, typeof memoryContracts>;
export type SearchPeer = Peer<typeof searchServices, typeof searchContracts>;

/** The memory services the jobs use (a whole memory peer is one). */
export type ConsolidatorMemory = Pick<MemoryPeer, "memories" | "proposals" | "maintenance" | "oauth">;
/** The search service the consolidation scan uses. */
export type ConsolidatorSearch = Pick<SearchPeer, "search">;

export function connectMemory(address: string, signer: CredentialSigner): MemoryPeer {
  return connectPeer(memoryServices, memoryContracts, { address, audience: "memory", signer });
}

export function connectSearch(address: string, signer: CredentialSigner): SearchPeer {
  return connectPeer(searchServices, searchContracts, { address, audience: "search", signer });
}
