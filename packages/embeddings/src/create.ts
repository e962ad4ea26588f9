import type { EmbeddingsConfig } from "./config.js";
import type { Embedder } from "./embedder.js";
import { HashingEmbedder } from "./hashing.js";
import { LocalModelEmbedder } from "./local-model.js";
import { defaultServiceWorkers, LocalModelPool } from "./local-model-pool.js";
import { createOpenAIEmbedder } from "./openai.js";

export interface CreateEmbedderOptions {
  /** For the local provider, load the model now rather than on first use. Default false. */
  warmup?: boolean;
  /** Aborts any start-up work (model load is not interruptible; the OpenAI size probe is). */
  signal?: AbortSignal;
  /** Worker threads for the local model when the config names none (0 = on the calling thread). Default 1. */
  defaultWorkers?: number;
}

/**
 * Builds the embedder selected by `config`. The local model runs in a pool of worker threads
 * (or on the calling thread with 0 workers) and loads lazily unless
 * `warmup` is set; an OpenAI-compatible model whose output size is neither
 * configured nor well known is probed with one request.
 */
export async function createEmbedder(config: EmbeddingsConfig, options: CreateEmbedderOptions = {}): Promise<Embedder> {
  switch (config.provider) {
    case "local": {
      const workers = config.workers ?? options.defaultWorkers ?? 1;
      const choice = {
        ...(config.model === undefined ? {} : { model: config.model }),
        ...(config.cacheDir === undefined ? {} : { cacheDir: config.cacheDir }),
      };
      const embedder = workers === 0 ? new LocalModelEmbedder(choice) : new LocalModelPool({ workers, ...choice });
      if (options.warmup === true) await embedder.warmup();
      return embedder;
    }
    case "hashing":
      return new HashingEmbedder({ dimensions: config.dimensions });
    case "openai":
      return createOpenAIEmbedder(
        {
          baseUrl: config.baseUrl,
          model: config.model,
          apiKey: config.apiKey,
          dimensions: config.dimensions,
          timeoutMs: config.timeoutMs,
        },
        options.signal === undefined ? {} : { signal: options.signal },
      );
  }
}

/**
 * The embedder a service was handed (null: none; its owner closes it, as standalone shares one
 * model among services), or one built from `config` with a service's worker count, closed with the
 * service (`defer`).
 */
export async function givenOrNewEmbedder(
  given: Embedder | null | undefined,
  config: EmbeddingsConfig,
  defer: (release: () => Promise<void>) => void,
): Promise<Embedder | null> {
  if (given !== undefined) return given;
  const embedder = await createEmbedder(config, { defaultWorkers: defaultServiceWorkers() });
  defer(async () => {
    await embedder.close?.();
  });
  return embedder;
}
