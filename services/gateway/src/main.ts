/** The gateway process: the only module with side effects. */
import { loadConfig, serviceMain } from "@3ngram/runtime";
import { gatewayConfigSchema } from "./config.js";
import { startGateway } from "./gateway.js";

await serviceMain({
  name: "gateway",
  loadConfig: () => loadConfig(gatewayConfigSchema),
  logLevel: (config) => config.logLevel,
  start: (config, log) => startGateway(config, { log }),
});
