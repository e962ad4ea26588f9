export {
  CredentialSigner,
  CredentialVerifier,
  DEFAULT_SCOPES,
  PUBLIC_SCOPES,
  SCOPES,
  generateServiceKeyPair,
  parseJwk,
  parseJwkSet,
  type CallerIdentity,
  type Scope,
  type ServiceKeyPair,
  type VerifiedCaller,
} from "./credentials.js";
export {
  CallContext,
  DEFAULT_MAX_CONNECTION_AGE_MS,
  maxConnectionAgeEnv,
  RpcServer,
  type Handlers,
  type MethodPolicy,
  type Policies,
  type RpcServerOptions,
  type ServedMethod,
} from "./server.js";
export {
  createRpcClient,
  createRpcClients,
  fromServiceError,
  serviceConfig,
  type CallOptions,
  type RpcClient,
  type RpcClientOptions,
  type RpcClients,
  type RpcMethods,
  type ServiceSet,
} from "./client.js";
export { checkHealth, checkHealthOn, type ServingStatus } from "./health.js";
export { grpcServiceDefinition } from "./service-definition.js";
export type { AnyService, KindOf, MethodName, RequestInitOf, RequestOf, ResponseInitOf, ResponseOf } from "./types.js";
export { signingKeyEnv, trustedKeysEnv } from "./credential-env.js";
export {
  bridgeClient,
  bridgeClients,
  bridgeHandlers,
  type BridgedClient,
  type BridgedClients,
  type Contracts,
  type BridgedHandlers,
  type Contract,
  type MethodContract,
  fromWire,
  parseWire,
  publicCodecs,
  toWire,
  wireValue,
} from "./bridge.js";
export { connectPeer, type Peer } from "./peer.js";
