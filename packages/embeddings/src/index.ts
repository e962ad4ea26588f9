export type { EmbedOptions, Embedder } from "./embedder.js";
export { EmbeddingsError } from "./errors.js";
export { embedWithinBudget, type BudgetedVector } from "./budget.js";
export { cosineSimilarity, l2Normalize } from "./cosine.js";
export { DEFAULT_MAX_INPUT_CHARS, memoryEmbeddingText, prepareText } from "./input.js";
export { DEFAULT_HASHING_DIMENSIONS, HashingEmbedder, MAX_VECTOR_DIMENSIONS, type HashingEmbedderOptions } from "./hashing.js";
export { LOCAL_BATCH_SIZE, LocalModelEmbedder, type LocalModelChoice, type LocalModelEmbedderOptions } from "./local-model.js";
export {
  BUNDLED_MODEL_NAMES,
  BUNDLED_MODELS,
  bundledModel,
  DEFAULT_BUNDLED_MODEL,
  type BundledModelName,
  type BundledModelSpec,
  type EmbedPurpose,
} from "./bundled-models.js";
export { modelCacheDir } from "./model-cache.js";
export { defaultServiceWorkers, LocalModelPool, MAX_LOCAL_WORKERS, type LocalModelPoolOptions } from "./local-model-pool.js";
export { createOpenAIClient, describeOpenAIFailure, type OpenAIClient, type OpenAIClientOptions, type OpenAIFailure } from "./openai-client.js";
export { createOpenAIEmbedder, DEFAULT_OPENAI_BATCH_SIZE, DEFAULT_OPENAI_TIMEOUT_MS, OpenAIEmbedder, type OpenAIEmbedderOptions } from "./openai.js";
export { EMBEDDINGS_PROVIDERS, embeddingsConfigSchema, parseEmbeddingsConfig, type EmbeddingsConfig, type EmbeddingsProvider } from "./config.js";
export { createEmbedder, type CreateEmbedderOptions } from "./create.js";
