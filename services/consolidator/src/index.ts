export { consolidatorConfigSchema } from "./config.js";
export { startConsolidator, type Consolidator } from "./server.js";
