/**
 * The memory service as the gateway sees it: a typed gRPC client, and the same client through the
 * bridge (memoryApi), whose calls take and answer the public shapes of @3ngram/schema. The bridge
 * converts generically (docs/grpc.md); nothing here maps a message by hand.
 */
import { bridgeClient, createRpcClient, type BridgedClient, type CredentialSigner, type RpcClient } from "@3ngram/rpc";
import { memoryContract } from "@3ngram/schema";
import { MemoryService } from "@3ngram/proto/memory/v1";

export type MemoryClient = RpcClient<typeof MemoryService>;
export type MemoryApi = BridgedClient<typeof MemoryService, typeof memoryContract>;

export function createMemoryClient(address: string, signer: CredentialSigner): MemoryClient {
  return createRpcClient(MemoryService, {
    address,
    audience: "memory",
    signer,
    maxReceiveMessageBytes: 64 * 1024 * 1024,
  });
}

/** The client's RPCs in public shapes. */
export const memoryApi = (client: MemoryClient): MemoryApi => bridgeClient(MemoryService, memoryContract, client);
