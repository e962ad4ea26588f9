import type { Embedder } from "@3ngram/embeddings";
import type { Logger } from "@3ngram/runtime";

/** An embedder whose model loads on first use unless asked to load earlier (the bundled local model). */
interface Warmable {
  warmup(): Promise<void>;
}

function isWarmable(embedder: Embedder): embedder is Embedder & Warmable {
  return typeof (embedder as Partial<Warmable>).warmup === "function";
}

/**
 * Starts loading the embedder's model now, in the background, and answers whether it is done.
 * Loading takes seconds (worker threads, ONNX Runtime, the model file), and a restarted replica
 * should answer as soon as it listens: until the model is in, searches run without their vector
 * leg at once (full text and recency still rank them) instead of each waiting out its embedding
 * budget. An embedder with nothing to load (the hashing one, a remote API) is ready from the
 * start. A load that fails counts as done: each query then asks the model, and runs without the
 * vector leg when it fails, as it always has.
 */
export function warmModel(embedder: Embedder | null, log: Logger): () => boolean {
  if (embedder === null || !isWarmable(embedder)) return () => true;
  let done = false;
  const started = Date.now();
  embedder.warmup().then(
    () => {
      done = true;
      log.info({ ms: Date.now() - started }, "embedding model loaded; searches use the vector leg");
    },
    (err: unknown) => {
      done = true;
      log.warn({ error: err instanceof Error ? err.name : "unknown" }, "embedding model failed to load at start; each search tries it again");
    },
  );
  return () => done;
}
