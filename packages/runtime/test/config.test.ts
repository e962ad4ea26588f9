import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, envBool, envPort, loadConfig } from "../src/index.js";

const schema = z.object({ PORT: envPort(8080), FLAG: envBool(false), URL: z.url() });

describe("loadConfig", () => {
  it("applies defaults and treats empty values as unset", () => {
    expect(loadConfig(schema, { URL: "http://x", PORT: "" })).toEqual({ PORT: 8080, FLAG: false, URL: "http://x" });
    expect(loadConfig(schema, { URL: "http://x", PORT: "9", FLAG: "1" })).toEqual({ PORT: 9, FLAG: true, URL: "http://x" });
  });

  it("fails once, listing every bad variable", () => {
    try {
      loadConfig(schema, { PORT: "70000", FLAG: "maybe" });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems.join("\n");
      expect(problems).toMatch(/PORT/);
      expect(problems).toMatch(/FLAG/);
      expect(problems).toMatch(/URL/);
    }
  });
});
