import { describe, expect, it } from "vitest";
import { loadSearchConfig } from "../src/config.js";

const base = { DATABASE_URL: "postgres://postgres@127.0.0.1:5432/x", SERVICE_TRUSTED_JWKS: '[{"kty":"OKP","crv":"Ed25519","x":"abc"}]' };

describe("search config", () => {
  it("defaults to the read-only role and port 50052", () => {
    expect(loadSearchConfig(base)).toMatchObject({ grpcPort: 50052, searchDbRole: "threengram_search" });
  });

  it("refuses to boot without trusted keys or with a bad port", () => {
    expect(() => loadSearchConfig({ DATABASE_URL: base.DATABASE_URL })).toThrow(/SERVICE_TRUSTED_JWKS/);
    expect(() => loadSearchConfig({ ...base, GRPC_PORT: "-1" })).toThrow(/GRPC_PORT/);
  });
});
