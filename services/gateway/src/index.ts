export { gatewayConfigSchema, type GatewayConfig } from "./config.js";
export { startGateway, type RunningGateway } from "./gateway.js";
