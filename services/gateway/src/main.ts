/** The gateway process: the only module with side effects. */
import { ConfigError, createLogger, guardProcess, loadConfig, onShutdown } from "@3ngram/runtime";
import { gatewayConfigSchema } from "./config.js";
import { startGateway } from "./gateway.js";

let config;
try {
  config = loadConfig(gatewayConfigSchema);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(1);
}

const log = createLogger({ service: "gateway", level: config.logLevel });
guardProcess(log);
const gateway = await startGateway(config, { log });
onShutdown(log, [() => gateway.close()]);
