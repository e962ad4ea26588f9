export { createGatewayApp, type GatewayAppDeps } from "./app.js";
export { gatewayConfigSchema, type GatewayConfig } from "./config.js";
export { startGateway, type GatewayDeps, type RunningGateway } from "./gateway.js";
