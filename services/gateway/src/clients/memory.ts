/**
 * The memory service as the gateway holds it: one peer, built once at startup, every memory.v1
 * service on one channel and every RPC in the public shapes of @3ngram/schema (the bridge converts
 * generically, docs/grpc.md). Call sites use it as it is: `memory.memories.remember(input, { identity })`.
 */
import { connectPeer, type CredentialSigner, type Peer } from "@3ngram/rpc";
import { memoryContracts } from "@3ngram/schema";
import { memoryServices } from "@3ngram/proto/memory/v1";

export type MemoryPeer = Peer<typeof memoryServices, typeof memoryContracts>;

export function connectMemory(address: string, signer: CredentialSigner): MemoryPeer {
  return connectPeer(memoryServices, memoryContracts, {
    address,
    audience: "memory",
    signer,
    // An import's answer lists every record of a file up to 32 MiB.
    maxReceiveMessageBytes: 64 * 1024 * 1024,
  });
}
