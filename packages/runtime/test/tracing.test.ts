import { Writable } from "node:stream";
import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-node";
import { describe, expect, it } from "vitest";
import { ConfigError, createLogger, startTracing } from "../src/index.js";
import { traceExporterFrom } from "../src/tracing.js";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, destination };
}

describe("tracing configuration", () => {
  it("is off unless the OTEL_* variables ask for an exporter", () => {
    expect(traceExporterFrom({})).toBe("none");
    expect(traceExporterFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe("otlp");
    expect(traceExporterFrom({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" })).toBe("otlp");
    expect(traceExporterFrom({ OTEL_TRACES_EXPORTER: "otlp" })).toBe("otlp");
    expect(traceExporterFrom({ OTEL_TRACES_EXPORTER: "console" })).toBe("console");
    expect(traceExporterFrom({ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe("none");
    expect(traceExporterFrom({ OTEL_SDK_DISABLED: "true", OTEL_TRACES_EXPORTER: "otlp" })).toBe("none");
    expect(() => traceExporterFrom({ OTEL_TRACES_EXPORTER: "zipkin" })).toThrow(ConfigError);
  });

  it("registers nothing when off: spans are no-ops and log lines carry no trace fields", () => {
    const tracing = startTracing({ serviceName: "t", env: {} });
    expect(tracing.enabled).toBe(false);
    const { lines, destination } = capture();
    const log = createLogger({ service: "t", destination });
    trace.getTracer("t").startActiveSpan("off", (span) => {
      expect(span.isRecording()).toBe(false);
      log.info("inside");
      span.end();
    });
    expect(lines[0]).not.toHaveProperty("trace_id");
  });

  it("when on, every log line written inside a span carries its trace and span ids", async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = startTracing({ serviceName: "t", exporter });
    try {
      const { lines, destination } = capture();
      const log = createLogger({ service: "t", destination });
      const ids = await trace.getTracer("t").startActiveSpan("work", async (span) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        log.info("inside, after an await");
        span.end();
        return span.spanContext();
      });
      log.info("outside");
      expect(lines[0]).toMatchObject({ msg: "inside, after an await", trace_id: ids.traceId, span_id: ids.spanId });
      expect(lines[1]).not.toHaveProperty("trace_id");
      expect(exporter.getFinishedSpans().map((s) => [s.name, s.resource.attributes["service.name"]])).toEqual([["work", "t"]]);
    } finally {
      await tracing.shutdown();
    }
  });
});
