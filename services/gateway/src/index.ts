export { createGatewayApp, type GatewayAppDeps } from "./app.js";
export { gatewayConfigSchema, type GatewayConfig } from "./config.js";
export { startGateway, type GatewayDeps, type RunningGateway } from "./gateway.js";
export type { ClientMetadataFetcher } from "./oauth/cimd/fetcher.js";
