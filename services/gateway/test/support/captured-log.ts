import { PassThrough } from "node:stream";
import { createLogger, type Logger } from "@3ngram/runtime";

/**
 * A real pino logger at debug level whose lines are kept in memory, so a test can assert what the
 * gateway logs (and, above all, what it never logs: keys, tokens, memory content).
 */
export function capturedLog(service = "gateway"): { log: Logger; lines: string[]; text(): string } {
  const lines: string[] = [];
  const sink = new PassThrough();
  sink.on("data", (chunk: Buffer) => lines.push(...chunk.toString("utf8").split("\n").filter(Boolean)));
  return { log: createLogger({ service, level: "debug", destination: sink }), lines, text: () => lines.join("\n") };
}
