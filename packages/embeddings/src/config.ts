import { z } from "zod";

import { BUNDLED_MODEL_NAMES, bundledModel, DEFAULT_BUNDLED_MODEL, type BundledModelName } from "./bundled-models.js";
import { MAX_VECTOR_DIMENSIONS } from "./hashing.js";
import { MAX_LOCAL_WORKERS } from "./local-model-pool.js";

const EMBEDDINGS_PROVIDERS = ["local", "openai", "hashing"] as const;

/** Validated embeddings settings, as produced by {@link parseEmbeddingsConfig}. */
export type EmbeddingsConfig =
  | {
      /** A bundled offline model (bundled-models.ts), run in this process. */
      provider: "local";
      /** Which one; unset means the default (e5-small-v2). */
      model?: BundledModelName | undefined;
      /** Where fetched model files are; unset means the user's cache (model-cache.ts). */
      cacheDir?: string | undefined;
      /**
       * Worker threads running the model; 0 runs it on the calling thread. Unset: the process
       * picks (one in standalone mode, one per core up to four in a service).
       */
      workers?: number | undefined;
    }
  | {
      /** Deterministic hashing embedder (tests, bulk benchmark loads). */
      provider: "hashing";
      dimensions: number;
    }
  | {
      /** OpenAI `/embeddings` API or a compatible server. */
      provider: "openai";
      baseUrl: string;
      model: string;
      apiKey?: string | undefined;
      /** Requested output size; omitted from requests when undefined. */
      dimensions?: number | undefined;
      timeoutMs: number;
    };

/** Environment variables are often set but empty (`FOO=`); treat that as unset. */
function blankToUndefined(value: unknown): unknown {
  return typeof value === "string" && value.trim() === "" ? undefined : value;
}

function optionalString() {
  return z.preprocess(blankToUndefined, z.string().trim().optional());
}

function optionalPositiveInt(name: string, max: number) {
  return z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .regex(/^\d+$/, { error: `${name} must be a positive integer` })
      .transform(Number)
      .pipe(
        z
          .number()
          .int()
          .min(1, { error: `${name} must be at least 1` })
          .max(max, { error: `${name} must be at most ${max}` }),
      )
      .optional(),
  );
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_HASHING_DIMENSIONS = 512;

/**
 * Schema for the embeddings environment variables. Parses a `process.env`-like
 * record (unrelated keys are ignored) into an {@link EmbeddingsConfig}:
 *
 * - `EMBEDDINGS_PROVIDER`: `local` (default) | `openai` | `hashing`
 * - `EMBEDDINGS_BASE_URL`: API root for `openai`, e.g. `https://api.openai.com/v1` (required for openai)
 * - `EMBEDDINGS_MODEL`: model name for `openai` (required for openai)
 * - `EMBEDDINGS_API_KEY`: bearer token for `openai` (optional, e.g. for local servers)
 * - `EMBEDDINGS_LOCAL_MODEL`: the bundled model for `local`: e5-small-v2 (default), bge-small-en-v1.5,
 *   all-minilm-l6-v2 or use-lite
 * - `EMBEDDINGS_MODEL_CACHE`: where fetched model files are (default ~/.cache/3ngram/models)
 * - `EMBEDDINGS_DIMENSIONS`: vector length; `hashing` defaults to 512, `openai` sends it
 *   as the `dimensions` request field, `local` only accepts its model's own
 * - `EMBEDDINGS_TIMEOUT_MS`: per-request timeout for `openai` (default 30000)
 * - `EMBEDDINGS_WORKERS`: worker threads running the `local` model (0 = on the event loop;
 *   unset = 1 in standalone mode, one per core up to 4 in a service)
 */
export const embeddingsConfigSchema = z
  .object({
    EMBEDDINGS_PROVIDER: z.preprocess(
      (value) => {
        const blank = blankToUndefined(value);
        return typeof blank === "string" ? blank.trim().toLowerCase() : blank;
      },
      z
        .enum(EMBEDDINGS_PROVIDERS, {
          error: `EMBEDDINGS_PROVIDER must be one of: ${EMBEDDINGS_PROVIDERS.join(", ")}`,
        })
        .default("local"),
    ),
    EMBEDDINGS_BASE_URL: z.preprocess(
      blankToUndefined,
      z
        .url({
          protocol: /^https?$/,
          error: "EMBEDDINGS_BASE_URL must be an http(s) URL, e.g. https://api.openai.com/v1",
        })
        .optional(),
    ),
    EMBEDDINGS_MODEL: optionalString(),
    EMBEDDINGS_LOCAL_MODEL: z.preprocess(
      (value) => {
        const blank = blankToUndefined(value);
        return typeof blank === "string" ? blank.trim().toLowerCase() : blank;
      },
      z.enum(BUNDLED_MODEL_NAMES, { error: `EMBEDDINGS_LOCAL_MODEL must be one of: ${BUNDLED_MODEL_NAMES.join(", ")}` }).optional(),
    ),
    EMBEDDINGS_MODEL_CACHE: optionalString(),
    EMBEDDINGS_API_KEY: optionalString(),
    EMBEDDINGS_DIMENSIONS: optionalPositiveInt("EMBEDDINGS_DIMENSIONS", MAX_VECTOR_DIMENSIONS),
    EMBEDDINGS_TIMEOUT_MS: optionalPositiveInt("EMBEDDINGS_TIMEOUT_MS", 600_000),
    EMBEDDINGS_WORKERS: z.preprocess(
      blankToUndefined,
      z
        .string()
        .trim()
        .regex(/^\d+$/, { error: "EMBEDDINGS_WORKERS must be a whole number" })
        .transform(Number)
        .pipe(
          z
            .number()
            .int()
            .max(MAX_LOCAL_WORKERS, { error: `EMBEDDINGS_WORKERS must be at most ${MAX_LOCAL_WORKERS}` }),
        )
        .optional(),
    ),
  })
  .superRefine((env, ctx) => {
    if (env.EMBEDDINGS_PROVIDER === "openai") {
      for (const name of ["EMBEDDINGS_BASE_URL", "EMBEDDINGS_MODEL"] as const) {
        if (env[name] === undefined) {
          ctx.addIssue({
            code: "custom",
            path: [name],
            message: `${name} is required when EMBEDDINGS_PROVIDER=openai`,
          });
        }
      }
    }
    const local = bundledModel(env.EMBEDDINGS_LOCAL_MODEL ?? DEFAULT_BUNDLED_MODEL);
    if (env.EMBEDDINGS_PROVIDER === "local" && env.EMBEDDINGS_DIMENSIONS !== undefined && env.EMBEDDINGS_DIMENSIONS !== local.dimensions) {
      ctx.addIssue({
        code: "custom",
        path: ["EMBEDDINGS_DIMENSIONS"],
        message: `EMBEDDINGS_DIMENSIONS must be ${local.dimensions} (or unset) when EMBEDDINGS_PROVIDER=local runs ${local.name}`,
      });
    }
  })
  .transform((env): EmbeddingsConfig => {
    switch (env.EMBEDDINGS_PROVIDER) {
      case "local":
        return {
          provider: "local",
          ...(env.EMBEDDINGS_LOCAL_MODEL === undefined ? {} : { model: env.EMBEDDINGS_LOCAL_MODEL }),
          ...(env.EMBEDDINGS_MODEL_CACHE === undefined ? {} : { cacheDir: env.EMBEDDINGS_MODEL_CACHE }),
          ...(env.EMBEDDINGS_WORKERS === undefined ? {} : { workers: env.EMBEDDINGS_WORKERS }),
        };
      case "hashing":
        return { provider: "hashing", dimensions: env.EMBEDDINGS_DIMENSIONS ?? DEFAULT_HASHING_DIMENSIONS };
      case "openai":
        return {
          provider: "openai",
          // Presence is guaranteed by the refinement above.
          baseUrl: env.EMBEDDINGS_BASE_URL ?? "",
          model: env.EMBEDDINGS_MODEL ?? "",
          apiKey: env.EMBEDDINGS_API_KEY,
          dimensions: env.EMBEDDINGS_DIMENSIONS,
          timeoutMs: env.EMBEDDINGS_TIMEOUT_MS ?? DEFAULT_TIMEOUT_MS,
        };
    }
  });

/** Parses embeddings settings from environment variables; throws a ZodError when invalid. */
export function parseEmbeddingsConfig(env: Record<string, string | undefined>): EmbeddingsConfig {
  return embeddingsConfigSchema.parse(env);
}
