import { describe, expect, it } from "vitest";
import { z } from "zod";
import { camelCaseKeys, ConfigError, envBool, envPort, loadConfig } from "../src/index.js";

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

describe("camelCaseKeys", () => {
  it("names each setting after its variable, in camelCase", () => {
    const settings = camelCaseKeys({ GRPC_MAX_CONNECTION_AGE_MS: 5, SEARCH_DB_ROLE: "r", PORT: 1, SEARCH_VECTOR_INDEX_MAX_VECTORS: 2, S3_BUCKET: "b" });
    expect(settings).toEqual({ grpcMaxConnectionAgeMs: 5, searchDbRole: "r", port: 1, searchVectorIndexMaxVectors: 2, s3Bucket: "b" });
    // The type follows the same rule, so a renamed variable fails to compile where its setting is read.
    const typed: { grpcMaxConnectionAgeMs: number; searchDbRole: string } = settings;
    expect(typed.searchDbRole).toBe("r");
  });
});
