/**
 * The search service as the gateway holds it: one peer, built once at startup, in the same shape as
 * the memory peer. Search serves a single service, so its set has one entry:
 * `search.search.search(input, { identity })` is the peer, the service, then the RPC.
 */
import { searchServices } from "@3ngram/proto/search/v1";
import { connectPeer, type CredentialSigner, type Peer } from "@3ngram/rpc";
import { searchContracts } from "@3ngram/schema";

export type SearchPeer = Peer<typeof searchServices, typeof searchContracts>;

export function connectSearch(address: string, signer: CredentialSigner): SearchPeer {
  return connectPeer(searchServices, searchContracts, { address, audience: "search", signer });
}
