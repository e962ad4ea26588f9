/** The gateway process: the only module with side effects. */
import { ConfigError, createLogger, guardProcess, loadConfig, onShutdown, startTracing, type Tracing } from "@3ngram/runtime";
import { gatewayConfigSchema } from "./config.js";
import { startGateway } from "./gateway.js";

let config;
let tracing: Tracing;
try {
  config = loadConfig(gatewayConfigSchema);
  // Before any client or server exists, so every span is created under the registered provider.
  tracing = startTracing({ serviceName: "gateway" });
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(1);
}

const log = createLogger({ service: "gateway", level: config.logLevel });
guardProcess(log);
const gateway = await startGateway(config, { log });
onShutdown(log, [() => gateway.close(), () => tracing.shutdown()]);
