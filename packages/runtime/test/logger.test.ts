import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../src/index.js";

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, destination };
}

describe("logger", () => {
  it("drops memory content, queries and secrets wherever they appear", () => {
    const { lines, destination } = capture();
    const log = createLogger({ service: "t", destination });
    log.info(
      { memoryId: "m1", content: "secret diary", query: "what did I say", nested: { apiKey: "3ng_x", token: "tok", topic: "private" }, contentLength: 12 },
      "stored",
    );
    const entry = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(entry).toMatchObject({ service: "t", memoryId: "m1", contentLength: 12, msg: "stored" });
    expect(lines[0]).not.toMatch(/secret diary|what did I say|3ng_x|tok"|private/);
  });
});
