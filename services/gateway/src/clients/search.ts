/**
 * The search service as the gateway sees it: a typed gRPC client, and the same client through the
 * bridge (searchApi), whose calls take and answer the public shapes of @3ngram/schema.
 */
import { SearchService } from "@3ngram/proto/search/v1";
import { bridgeClient, createRpcClient, type BridgedClient, type CredentialSigner, type RpcClient } from "@3ngram/rpc";
import { searchContract } from "@3ngram/schema";

export type SearchClient = RpcClient<typeof SearchService>;
export type SearchApi = BridgedClient<typeof SearchService, typeof searchContract>;

export function createSearchClient(address: string, signer: CredentialSigner): SearchClient {
  return createRpcClient(SearchService, { address, audience: "search", signer });
}

/** The client's RPCs in public shapes. */
export const searchApi = (client: SearchClient): SearchApi => bridgeClient(SearchService, searchContract, client);
