/**
 * A peer service as its callers hold it: built once at startup, every RPC taking and answering the
 * public shapes of @3ngram/schema, plus the channel's health and close. Call sites use it as it is;
 * nothing wraps a client per call.
 *
 * Each call is one change of representation per direction: the public request is encoded straight
 * to bytes and the answer's bytes decoded straight to the public value (publicCodecs, bridge.ts); the protobuf
 * message lives only inside those two functions. Answers are not validated (the peer's output is
 * covered by the round-trip tests), and their keys come in the public schema's order.
 */
import type { DescMethod } from "@bufbuild/protobuf";
import { publicCodecs, type BridgedClients, type Contracts, type MethodContract } from "./bridge.js";
import { bindServices, type RpcClientOptions, type ServiceSet } from "./client.js";
import type { MethodCodecs } from "./service-definition.js";
import type { ServingStatus } from "./health.js";

export type Peer<M extends ServiceSet, C extends Contracts<M>> = BridgedClients<M, C> & {
  /** The peer's gRPC health, asked over the channel that serves the calls. */
  health(): Promise<ServingStatus>;
  /** Closes the channel; calls made after it fail. */
  close(): void;
};

/** One channel to the peer, its services by the set's names, in public shapes. */
export function connectPeer<M extends ServiceSet, C extends Contracts<M>>(services: M, contracts: C, options: RpcClientOptions): Peer<M, C> {
  const { health, close, ...clients } = bindServices(services, options, (service, key) => {
    // Only the RPCs the contract names are callable, as with the bridge.
    const contract = contracts[key] as Record<string, MethodContract | undefined>;
    const codecs = new Map<DescMethod, MethodCodecs>();
    for (const method of service.methods) {
      const entry = contract[method.localName];
      if (entry !== undefined) codecs.set(method, publicCodecs(method, entry));
    }
    return codecs;
  });
  return { ...(clients as unknown as BridgedClients<M, C>), health, close };
}
