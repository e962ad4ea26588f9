import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-node";
import { startTracing } from "@3ngram/runtime";
import { describe, expect, it } from "vitest";
import { traceEnqueue } from "../src/trace-context.js";

describe("the queue's spans", () => {
  it("reach whichever tracer provider is registered now, also after an earlier one was shut down", async () => {
    // As in one test worker running two files that each register tracing: a tracer kept from the
    // module's load stayed bound to the first provider and the second never saw a span.
    for (const round of [1, 2]) {
      const exporter = new InMemorySpanExporter();
      const tracing = startTracing({ serviceName: `round-${round}`, exporter });
      try {
        await traceEnqueue("jobs", "noted", async () => undefined);
        expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(["send jobs"]);
      } finally {
        await tracing.shutdown();
      }
    }
  });
});
