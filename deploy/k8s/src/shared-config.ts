/**
 * Settings several services must agree on. They are written once here and copied into each
 * service's ConfigMap: the queue prefix ties memory (producer) to the consolidator (consumer),
 * and the embeddings provider must be the same wherever vectors are made or compared.
 */
export const SHARED_CONFIG = {
  REDIS_KEY_PREFIX: "3ngram",
  EMBEDDINGS_PROVIDER: "local",
  LOG_LEVEL: "info",
} as const;

export const QUEUE_CONFIG = { REDIS_KEY_PREFIX: SHARED_CONFIG.REDIS_KEY_PREFIX };
/**
 * One model worker thread per pod: every pod that embeds has a CPU limit of one core, and Node in a
 * pod may count every core of the node, which would start a model copy (~70–130 MB) per node core.
 */
export const EMBEDDINGS_CONFIG = { EMBEDDINGS_PROVIDER: SHARED_CONFIG.EMBEDDINGS_PROVIDER, EMBEDDINGS_WORKERS: "1" };
export const LOG_CONFIG = { LOG_LEVEL: SHARED_CONFIG.LOG_LEVEL };
