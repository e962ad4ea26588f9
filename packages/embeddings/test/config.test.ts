import { describe, expect, it } from "vitest";
import { ZodError } from "zod";

import { embeddingsConfigSchema, parseEmbeddingsConfig } from "../src/config.js";
import { createEmbedder } from "../src/create.js";

function issuesOf(env: Record<string, string | undefined>): { path: string; message: string }[] {
  const result = embeddingsConfigSchema.safeParse(env);
  if (result.success) throw new Error("expected parsing to fail");
  return result.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message }));
}

describe("parseEmbeddingsConfig", () => {
  it("defaults to the local provider and ignores unrelated variables", () => {
    expect(parseEmbeddingsConfig({})).toEqual({ provider: "local" });
    expect(parseEmbeddingsConfig({ PATH: "/usr/bin", EMBEDDINGS_PROVIDER: "" })).toEqual({ provider: "local" });
  });

  it("accepts the local model's own size but rejects any other", () => {
    expect(parseEmbeddingsConfig({ EMBEDDINGS_PROVIDER: "local", EMBEDDINGS_DIMENSIONS: "384" })).toEqual({
      provider: "local",
    });
    expect(parseEmbeddingsConfig({ EMBEDDINGS_LOCAL_MODEL: "use-lite", EMBEDDINGS_DIMENSIONS: "512" })).toEqual({
      provider: "local",
      model: "use-lite",
    });
    expect(issuesOf({ EMBEDDINGS_PROVIDER: "local", EMBEDDINGS_DIMENSIONS: "768" })).toEqual([
      expect.objectContaining({ path: "EMBEDDINGS_DIMENSIONS", message: expect.stringContaining("384") as unknown }),
    ]);
  });

  it("selects a bundled model by name, in any case, and names the choices when it is unknown", () => {
    expect(parseEmbeddingsConfig({ EMBEDDINGS_LOCAL_MODEL: " E5-Small-V2 ", EMBEDDINGS_MODEL_CACHE: "/srv/models" })).toEqual({
      provider: "local",
      model: "e5-small-v2",
      cacheDir: "/srv/models",
    });
    expect(issuesOf({ EMBEDDINGS_LOCAL_MODEL: "bge-large" })).toEqual([
      {
        path: "EMBEDDINGS_LOCAL_MODEL",
        message: "EMBEDDINGS_LOCAL_MODEL must be one of: bge-small-en-v1.5, e5-small-v2, all-minilm-l6-v2, use-lite",
      },
    ]);
  });

  it("gives the hashing provider 512 dimensions unless told otherwise", () => {
    expect(parseEmbeddingsConfig({ EMBEDDINGS_PROVIDER: "hashing" })).toEqual({ provider: "hashing", dimensions: 512 });
    expect(parseEmbeddingsConfig({ EMBEDDINGS_PROVIDER: "hashing", EMBEDDINGS_DIMENSIONS: "64" })).toEqual({
      provider: "hashing",
      dimensions: 64,
    });
  });

  it("parses a complete openai configuration", () => {
    expect(
      parseEmbeddingsConfig({
        EMBEDDINGS_PROVIDER: "OpenAI",
        EMBEDDINGS_BASE_URL: "https://api.openai.com/v1",
        EMBEDDINGS_MODEL: "text-embedding-3-small",
        EMBEDDINGS_API_KEY: "sk-abc",
        EMBEDDINGS_DIMENSIONS: "256",
        EMBEDDINGS_TIMEOUT_MS: "5000",
      }),
    ).toEqual({
      provider: "openai",
      baseUrl: "https://api.openai.com/v1",
      model: "text-embedding-3-small",
      apiKey: "sk-abc",
      dimensions: 256,
      timeoutMs: 5000,
    });
  });

  it("applies openai defaults and treats blank values as unset", () => {
    expect(
      parseEmbeddingsConfig({
        EMBEDDINGS_PROVIDER: "openai",
        EMBEDDINGS_BASE_URL: "http://localhost:11434/v1",
        EMBEDDINGS_MODEL: "nomic-embed-text",
        EMBEDDINGS_API_KEY: "",
        EMBEDDINGS_DIMENSIONS: " ",
      }),
    ).toEqual({
      provider: "openai",
      baseUrl: "http://localhost:11434/v1",
      model: "nomic-embed-text",
      apiKey: undefined,
      dimensions: undefined,
      timeoutMs: 30000,
    });
  });

  it("names each missing variable when the openai provider is incomplete", () => {
    expect(() => parseEmbeddingsConfig({ EMBEDDINGS_PROVIDER: "openai" })).toThrow(ZodError);
    expect(issuesOf({ EMBEDDINGS_PROVIDER: "openai" })).toEqual([
      {
        path: "EMBEDDINGS_BASE_URL",
        message: "EMBEDDINGS_BASE_URL is required when EMBEDDINGS_PROVIDER=openai",
      },
      { path: "EMBEDDINGS_MODEL", message: "EMBEDDINGS_MODEL is required when EMBEDDINGS_PROVIDER=openai" },
    ]);
    expect(issuesOf({ EMBEDDINGS_PROVIDER: "openai", EMBEDDINGS_BASE_URL: "https://api.openai.com/v1" }).map((issue) => issue.path)).toEqual([
      "EMBEDDINGS_MODEL",
    ]);
  });

  it("rejects an unknown provider, a non-http URL and malformed numbers", () => {
    expect(issuesOf({ EMBEDDINGS_PROVIDER: "cohere" })[0]).toEqual({
      path: "EMBEDDINGS_PROVIDER",
      message: "EMBEDDINGS_PROVIDER must be one of: local, openai, hashing",
    });
    expect(issuesOf({ EMBEDDINGS_PROVIDER: "openai", EMBEDDINGS_BASE_URL: "ftp://x.example", EMBEDDINGS_MODEL: "m" })[0]?.path).toBe("EMBEDDINGS_BASE_URL");
    for (const bad of ["abc", "1.5", "-3", "0", "99999"]) {
      expect(issuesOf({ EMBEDDINGS_PROVIDER: "hashing", EMBEDDINGS_DIMENSIONS: bad })[0]?.path).toBe("EMBEDDINGS_DIMENSIONS");
    }
    expect(issuesOf({ EMBEDDINGS_TIMEOUT_MS: "soon" })[0]?.message).toBe("EMBEDDINGS_TIMEOUT_MS must be a positive integer");
  });
});

describe("EMBEDDINGS_WORKERS", () => {
  it("sets the local model's worker threads, 0 meaning the event loop", () => {
    expect(parseEmbeddingsConfig({ EMBEDDINGS_WORKERS: "3" })).toEqual({ provider: "local", workers: 3 });
    expect(parseEmbeddingsConfig({ EMBEDDINGS_WORKERS: "0" })).toEqual({ provider: "local", workers: 0 });
    expect(parseEmbeddingsConfig({ EMBEDDINGS_WORKERS: "" })).toEqual({ provider: "local" });
  });

  it("names the variable when the value is not a small whole number", () => {
    expect(issuesOf({ EMBEDDINGS_WORKERS: "two" })[0]?.message).toBe("EMBEDDINGS_WORKERS must be a whole number");
    expect(issuesOf({ EMBEDDINGS_WORKERS: "99" })[0]?.message).toBe("EMBEDDINGS_WORKERS must be at most 16");
  });
});

describe("createEmbedder", () => {
  it("builds a hashing embedder from parsed configuration", async () => {
    const embedder = await createEmbedder(parseEmbeddingsConfig({ EMBEDDINGS_PROVIDER: "hashing", EMBEDDINGS_DIMENSIONS: "128" }));
    expect(embedder.model).toBe("hashing-128");
    expect(embedder.dimensions).toBe(128);
    const [vector] = await embedder.embed(["hello"]);
    expect(vector).toHaveLength(128);
  });

  it("builds the local embedder without loading the model", async () => {
    const embedder = await createEmbedder(parseEmbeddingsConfig({}));
    expect(embedder.model).toBe("e5-small-v2-int8");
    expect(embedder.dimensions).toBe(384);
  });
});
