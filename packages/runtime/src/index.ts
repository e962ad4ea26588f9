export { camelCaseKeys, ConfigError, envBool, envLogLevel, envPort, loadConfig, type CamelCaseKeys, type Env } from "./config.js";
export { createLogger, type Logger } from "./logger.js";
export { errorSummary, onShutdown } from "./shutdown.js";
export { composeService, type Defer, type Release } from "./resources.js";
export { createMetricsRegistry, serveMetrics } from "./metrics.js";
export { guardProcess } from "./process-guard.js";
export { serviceMain } from "./service-main.js";
export { startTracing, type Tracing } from "./tracing.js";
