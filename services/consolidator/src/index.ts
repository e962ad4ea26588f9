export { consolidatorConfigSchema, type ConsolidatorConfig } from "./config.js";
export { startConsolidator, type Consolidator, type ConsolidatorDeps } from "./server.js";
