import { describe, expect, it } from "vitest";
import { generateServiceKeyPair } from "@3ngram/rpc";
import { ConfigError, loadConfig } from "@3ngram/runtime";
import { consolidatorConfigSchema } from "../src/config.js";

const { privateJwk, publicJwk } = await generateServiceKeyPair("consolidator-test");
const jwk = JSON.stringify(privateJwk);

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(consolidatorConfigSchema, env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

describe("consolidator config", () => {
  it("needs only the signing key; everything else has a default", () => {
    expect(loadConfig(consolidatorConfigSchema, { SERVICE_SIGNING_JWK: jwk })).toEqual({
      redisUrl: "redis://127.0.0.1:6379",
      redisKeyPrefix: "3ngram",
      memoryAddr: "127.0.0.1:50051",
      searchAddr: "127.0.0.1:50052",
      signingJwk: privateJwk,
      workerConcurrency: 2,
      jobLockMs: 30_000,
      extractor: { kind: "rules" },
      commitmentGraceMs: 24 * 3_600_000,
      oauthClientIdleDays: 30,
      metricsPort: 9103,
      logLevel: "info",
      embeddings: { provider: "local" },
    });
  });

  it("reads every variable it documents", () => {
    const config = loadConfig(consolidatorConfigSchema, {
      SERVICE_SIGNING_JWK: jwk,
      REDIS_URL: "rediss://cache.internal:6380/2",
      REDIS_KEY_PREFIX: "prod",
      MEMORY_ADDR: "dns:///memory:50051",
      SEARCH_ADDR: "dns:///search:50052",
      WORKER_CONCURRENCY: "8",
      JOB_LOCK_MS: "5000",
      FACT_EXTRACTOR: "llm",
      FACT_EXTRACTOR_LLM_BASE_URL: "http://llm.internal:8000/v1",
      FACT_EXTRACTOR_LLM_MODEL: "small-model",
      FACT_EXTRACTOR_LLM_API_KEY: "sk-test",
      FACT_EXTRACTOR_LLM_TIMEOUT_MS: "1500",
      COMMITMENT_EXPIRY_GRACE_HOURS: "0.5",
      OAUTH_CLIENT_IDLE_DAYS: "7",
      METRICS_PORT: "0",
      LOG_LEVEL: "debug",
      EMBEDDINGS_PROVIDER: "hashing",
      EMBEDDINGS_DIMENSIONS: "128",
    });
    expect(config).toMatchObject({
      redisUrl: "rediss://cache.internal:6380/2",
      redisKeyPrefix: "prod",
      memoryAddr: "dns:///memory:50051",
      searchAddr: "dns:///search:50052",
      workerConcurrency: 8,
      jobLockMs: 5000,
      extractor: { kind: "llm", baseUrl: "http://llm.internal:8000/v1", model: "small-model", apiKey: "sk-test", timeoutMs: 1500 },
      commitmentGraceMs: 1_800_000,
      oauthClientIdleDays: 7,
      metricsPort: 0,
      logLevel: "debug",
      embeddings: { provider: "hashing", dimensions: 128 },
    });
  });

  it("refuses to start without a signing key", () => {
    expect(problems({}).join("\n")).toMatch(/^SERVICE_SIGNING_JWK: /m);
  });

  it("refuses a public key, or something that is not a JWK", () => {
    expect(problems({ SERVICE_SIGNING_JWK: JSON.stringify(publicJwk) })).toEqual([
      "SERVICE_SIGNING_JWK: must be a private Ed25519 JWK (kty OKP, crv Ed25519, with d)",
    ]);
    expect(problems({ SERVICE_SIGNING_JWK: "{not json" })).toEqual(["SERVICE_SIGNING_JWK: must be a private Ed25519 JWK (kty OKP, crv Ed25519, with d)"]);
  });

  it("lists every bad variable at once, including the embeddings ones", () => {
    const found = problems({
      SERVICE_SIGNING_JWK: jwk,
      REDIS_URL: "http://127.0.0.1:6379",
      WORKER_CONCURRENCY: "0",
    });
    expect(found.map((p) => p.split(":")[0])).toEqual(["REDIS_URL", "WORKER_CONCURRENCY"]);

    const llm = problems({ SERVICE_SIGNING_JWK: jwk, FACT_EXTRACTOR: "llm" });
    expect(llm.map((p) => p.split(":")[0]).sort()).toEqual(["FACT_EXTRACTOR_LLM_BASE_URL", "FACT_EXTRACTOR_LLM_MODEL"]);

    const embeddings = problems({ SERVICE_SIGNING_JWK: jwk, EMBEDDINGS_PROVIDER: "openai" });
    expect(embeddings.map((p) => p.split(":")[0]).sort()).toEqual(["EMBEDDINGS_BASE_URL", "EMBEDDINGS_MODEL"]);
  });
});
