/**
 * A peer service as its callers hold it: built once at startup, every RPC taking and answering the
 * public shapes of @3ngram/schema, plus the channel's health and close. Call sites use it as it is;
 * nothing wraps a client per call.
 */
import { bridgeClients, type BridgedClients, type Contracts } from "./bridge.js";
import { createRpcClients, type RpcClientOptions, type ServiceSet } from "./client.js";
import type { ServingStatus } from "./health.js";

export type Peer<M extends ServiceSet, C extends Contracts<M>> = BridgedClients<M, C> & {
  /** The peer's gRPC health, asked over the channel that serves the calls. */
  health(): Promise<ServingStatus>;
  /** Closes the channel; calls made after it fail. */
  close(): void;
};

/** One channel to the peer, its services by the set's names, in public shapes. */
export function connectPeer<M extends ServiceSet, C extends Contracts<M>>(services: M, contracts: C, options: RpcClientOptions): Peer<M, C> {
  const clients = createRpcClients(services, options);
  const bridged = bridgeClients(services, contracts, clients as never) as BridgedClients<M, C>;
  return { ...bridged, health: () => clients.health(), close: () => clients.close() };
}
