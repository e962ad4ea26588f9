export { ConfigError, envBool, envLogLevel, envPort, loadConfig, type Env } from "./config.js";
export { createLogger, type Logger } from "./logger.js";
export { errorSummary, onShutdown, type Closer } from "./shutdown.js";
export { composeService, type Defer, type Release } from "./resources.js";
export { createMetricsRegistry, serveMetrics } from "./metrics.js";
export { guardProcess, type ProcessGuardOptions } from "./process-guard.js";
export { serviceMain, type ServiceMain } from "./service-main.js";
export { startTracing, traceExporterFrom, type TraceExporterKind, type Tracing, type TracingOptions } from "./tracing.js";
