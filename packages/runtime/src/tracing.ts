/**
 * OpenTelemetry tracing for a 3ngram process: off unless the standard OTEL_* variables ask for it.
 *
 * On when OTEL_TRACES_EXPORTER is `otlp` (or `console`), or when it is unset and an OTLP endpoint
 * is configured (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); OTEL_SDK_DISABLED
 * switches it off whatever else is set. The OTLP exporter (protobuf over HTTP) reads its own
 * variables (endpoint, headers, timeout, compression), the sampler OTEL_TRACES_SAMPLER[_ARG], the
 * resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, the propagators OTEL_PROPAGATORS (W3C
 * trace context and baggage by default).
 *
 * Off, nothing is registered: every span the code starts is the API's non-recording no-op and
 * no context is propagated, so the cost is a few allocations per request. On, spans carry the
 * W3C trace context across gRPC (packages/rpc) and queued jobs (packages/queue), and every log
 * line written inside a span carries its trace_id and span_id (logger.ts).
 */
import { context, propagation, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, ConsoleSpanExporter, NodeTracerProvider, SimpleSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-node";
import { ConfigError, type Env } from "./config.js";

export type TraceExporterKind = "none" | "otlp" | "console";

export interface TracingOptions {
  /** service.name unless OTEL_SERVICE_NAME says otherwise ("gateway", "memory", …). */
  serviceName: string;
  env?: Env;
  /**
   * Export here instead of what the environment says, each span as it ends (tests hand in an
   * in-memory exporter). Tracing is then on regardless of the environment.
   */
  exporter?: SpanExporter;
}

export interface Tracing {
  readonly enabled: boolean;
  /** Flushes what is buffered and unregisters the global provider. */
  shutdown(): Promise<void>;
}

const TRUE = new Set(["true", "1"]);

/** Which exporter the environment asks for; a value we do not know is a configuration error. */
export function traceExporterFrom(env: Env): TraceExporterKind {
  if (TRUE.has((env.OTEL_SDK_DISABLED ?? "").trim().toLowerCase())) return "none";
  const asked = (env.OTEL_TRACES_EXPORTER ?? "").trim().toLowerCase();
  if (asked === "") return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT ? "otlp" : "none";
  if (asked === "none" || asked === "otlp" || asked === "console") return asked;
  throw new ConfigError([`OTEL_TRACES_EXPORTER: "${asked}" is not supported (none, otlp or console)`]);
}

const OFF: Tracing = { enabled: false, shutdown: async () => {} };

/** Starts tracing for this process if configured; call once, before any client or server is built. */
export function startTracing(options: TracingOptions): Tracing {
  const env = options.env ?? process.env;
  const kind = options.exporter ? "otlp" : traceExporterFrom(env);
  if (kind === "none") return OFF;
  const processor = options.exporter
    ? new SimpleSpanProcessor(options.exporter)
    : new BatchSpanProcessor(kind === "console" ? new ConsoleSpanExporter() : new OTLPTraceExporter());
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME || options.serviceName }),
    spanProcessors: [processor],
  });
  // Sets the global tracer provider, the AsyncLocalStorage context manager and the propagators.
  // Code that traces asks trace.getTracer() at each use rather than keeping a tracer from module
  // load: the API binds a tracer to the provider that was registered when it was first used, so
  // one kept from load would never reach a provider registered after an earlier one was shut down
  // (test files sharing one worker do exactly that: ADR-0046).
  provider.register();
  return {
    enabled: true,
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
