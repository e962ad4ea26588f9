import { describe, expect, it } from "vitest";
import { ConfigError } from "@3ngram/runtime";
import { loadMemoryConfig } from "../src/config.js";

const base = { DATABASE_URL: "postgres://postgres@127.0.0.1:5432/x", SERVICE_TRUSTED_JWKS: '[{"kty":"OKP","crv":"Ed25519","x":"abc"}]' };

describe("memory config", () => {
  it("parses the environment with defaults", () => {
    const config = loadMemoryConfig(base);
    expect(config).toMatchObject({ grpcPort: 50051, runtimeDbRole: "threengram_app", embedInlineBudgetMs: 2000, migrateOnStart: true });
    expect(config.serviceTrustedJwks).toHaveLength(1);
    expect(config.embeddings.provider).toBe("local");
  });

  it("refuses to boot on bad values", () => {
    expect(() => loadMemoryConfig({ ...base, DATABASE_URL: "mysql://x" })).toThrow(ConfigError);
    expect(() => loadMemoryConfig({ ...base, SERVICE_TRUSTED_JWKS: "not json" })).toThrow(/SERVICE_TRUSTED_JWKS/);
    expect(() => loadMemoryConfig({ ...base, RUNTIME_DB_ROLE: "app; DROP TABLE memories" })).toThrow(/RUNTIME_DB_ROLE/);
    expect(() => loadMemoryConfig({ ...base, EMBEDDINGS_PROVIDER: "openai" })).toThrow(/EMBEDDINGS_BASE_URL/);
  });
});
