/**
 * The memory service as the gateway sees it: a typed gRPC client per service of memory.v1, all on
 * one channel, and the same clients through the bridge (memoryApi), whose calls take and answer the
 * public shapes of @3ngram/schema. The bridge converts generically (docs/grpc.md); nothing here maps
 * a message by hand.
 */
import { bridgeClients, createRpcClients, type BridgedClients, type CredentialSigner, type RpcClients } from "@3ngram/rpc";
import { memoryContracts } from "@3ngram/schema";
import { memoryServices } from "@3ngram/proto/memory/v1";

export type MemoryClient = RpcClients<typeof memoryServices>;
export type MemoryApi = BridgedClients<typeof memoryServices, typeof memoryContracts>;

export function createMemoryClient(address: string, signer: CredentialSigner): MemoryClient {
  return createRpcClients(memoryServices, {
    address,
    audience: "memory",
    signer,
    // An import's answer lists every record of a file up to 32 MiB.
    maxReceiveMessageBytes: 64 * 1024 * 1024,
  });
}

/** The clients' RPCs in public shapes, by service. */
export const memoryApi = (client: MemoryClient): MemoryApi => bridgeClients(memoryServices, memoryContracts, client);
