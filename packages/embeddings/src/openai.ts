import { l2Normalize } from "./cosine.js";
import type { EmbedOptions, Embedder } from "./embedder.js";
import { EmbeddingsError } from "./errors.js";
import { checkMaxInputChars, DEFAULT_MAX_INPUT_CHARS, prepareText } from "./input.js";
import { createOpenAIClient, describeOpenAIFailure, type OpenAIClient } from "./openai-client.js";

const DEFAULT_OPENAI_TIMEOUT_MS = 30_000;
/** Texts per request; OpenAI accepts up to 2048, smaller batches keep requests modest. */
const DEFAULT_OPENAI_BATCH_SIZE = 128;

/** Output sizes of well-known OpenAI models when no `dimensions` is requested. */
const KNOWN_MODEL_DIMENSIONS: ReadonlyMap<string, number> = new Map([
  ["text-embedding-3-small", 1536],
  ["text-embedding-3-large", 3072],
  ["text-embedding-ada-002", 1536],
]);

const PROVIDER = "openai";

export interface OpenAIEmbedderOptions {
  /** API root, e.g. "https://api.openai.com/v1"; requests go to `${baseUrl}/embeddings`. */
  baseUrl: string;
  /** Model name sent to the API, e.g. "text-embedding-3-small". */
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>` when set. */
  apiKey?: string | undefined;
  /**
   * Requested output size, sent as the `dimensions` request field (supported by
   * text-embedding-3-* and some compatible servers). Also the expected vector length.
   */
  dimensions?: number | undefined;
  /**
   * Vector length the server returns when `dimensions` is not requested. Known
   * OpenAI models are looked up automatically; {@link createOpenAIEmbedder}
   * asks the server for anything else.
   */
  responseDimensions?: number | undefined;
  /** Per-request timeout. Default 30 s. */
  timeoutMs?: number | undefined;
  /** Texts per request. Default 128. */
  batchSize?: number | undefined;
  /** Inputs longer than this are truncated. Default 8000 characters. */
  maxInputChars?: number | undefined;
  /** Fetch implementation; defaults to the global `fetch`. */
  fetch?: typeof fetch | undefined;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`OpenAIEmbedder: ${name} must be a positive integer, got ${value}`);
  }
  return value;
}

interface RequestSettings {
  client: OpenAIClient;
  model: string;
  requestDimensions: number | undefined;
  timeoutMs: number;
}

function buildSettings(options: OpenAIEmbedderOptions): RequestSettings {
  if (options.model.trim() === "") throw new RangeError("OpenAIEmbedder: model must not be empty");
  const timeoutMs = positiveInteger("timeoutMs", options.timeoutMs ?? DEFAULT_OPENAI_TIMEOUT_MS);
  return {
    client: createOpenAIClient({ baseUrl: options.baseUrl, apiKey: options.apiKey, timeoutMs, fetch: options.fetch }, "OpenAIEmbedder"),
    model: options.model,
    requestDimensions: options.dimensions === undefined ? undefined : positiveInteger("dimensions", options.dimensions),
    timeoutMs,
  };
}

/** One call to the embeddings endpoint; returns raw vectors in input order. */
async function requestEmbeddings(settings: RequestSettings, inputs: string[], callerSignal: AbortSignal | undefined): Promise<number[][]> {
  const where = `${settings.client.where}/embeddings`;
  let data: unknown;
  try {
    const response = await settings.client.sdk.embeddings.create(
      {
        model: settings.model,
        input: inputs,
        // The SDK asks for base64 unless told otherwise; compatible servers do not all speak it.
        encoding_format: "float",
        ...(settings.requestDimensions !== undefined ? { dimensions: settings.requestDimensions } : {}),
      },
      callerSignal ? { signal: callerSignal } : {},
    );
    data = (response as { data?: unknown }).data;
  } catch (error) {
    const failure = describeOpenAIFailure(error, where, settings.timeoutMs, callerSignal);
    if (failure === null) throw callerSignal!.reason;
    throw new EmbeddingsError(`embeddings ${failure.message}`, {
      provider: PROVIDER,
      retryable: failure.retryable,
      ...(failure.status !== undefined ? { status: failure.status } : {}),
      cause: error,
    });
  }

  const invalid = (problem: string): EmbeddingsError => new EmbeddingsError(`embeddings response from ${where} is invalid: ${problem}`, { provider: PROVIDER });
  if (!Array.isArray(data)) throw invalid("missing `data` array");
  if (data.length !== inputs.length) {
    throw invalid(`expected ${inputs.length} embeddings, got ${data.length}`);
  }

  const ordered = new Array<number[] | undefined>(inputs.length);
  data.forEach((item: unknown, position: number) => {
    const entry = item as { embedding?: unknown; index?: unknown } | null;
    const embedding = entry?.embedding;
    if (!Array.isArray(embedding) || embedding.length === 0) {
      throw invalid(`item ${position} has no numeric \`embedding\` array (base64 encoding is not supported)`);
    }
    if (!embedding.every((value) => typeof value === "number" && Number.isFinite(value))) {
      throw invalid(`item ${position} contains a non-finite value`);
    }
    const index = entry?.index ?? position;
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= inputs.length) {
      throw invalid(`item ${position} has an out-of-range index`);
    }
    if (ordered[index] !== undefined) throw invalid(`index ${index} appears twice`);
    ordered[index] = embedding as number[];
  });
  return ordered as number[][];
}

/**
 * Embedder for OpenAI's `/embeddings` API and compatible servers (Azure-style
 * gateways, vLLM, Ollama, LiteLLM, ...), through the official SDK (./openai-client.ts).
 */
export class OpenAIEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  readonly remote = true;
  private readonly settings: RequestSettings;
  private readonly batchSize: number;
  private readonly maxInputChars: number;

  constructor(options: OpenAIEmbedderOptions) {
    const settings = buildSettings(options);
    const dimensions = settings.requestDimensions ?? options.responseDimensions ?? KNOWN_MODEL_DIMENSIONS.get(options.model);
    if (dimensions === undefined) {
      throw new RangeError(
        `OpenAIEmbedder: the output size of model "${options.model}" is unknown; ` +
          "set dimensions (EMBEDDINGS_DIMENSIONS) or use createOpenAIEmbedder() to ask the server",
      );
    }
    this.model = `openai:${options.model}`;
    this.dimensions = positiveInteger("dimensions", dimensions);
    this.batchSize = positiveInteger("batchSize", options.batchSize ?? DEFAULT_OPENAI_BATCH_SIZE);
    this.maxInputChars = checkMaxInputChars("OpenAIEmbedder", options.maxInputChars ?? DEFAULT_MAX_INPUT_CHARS);
    this.settings = settings;
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<number[][]> {
    const { signal } = options;
    signal?.throwIfAborted();
    const inputs = texts.map((text) => prepareText(text, this.maxInputChars));
    const vectors: number[][] = [];
    for (let start = 0; start < inputs.length; start += this.batchSize) {
      signal?.throwIfAborted();
      const batch = inputs.slice(start, start + this.batchSize);
      const raw = await requestEmbeddings(this.settings, batch, signal);
      for (const vector of raw) {
        if (vector.length !== this.dimensions) {
          throw new EmbeddingsError(
            `embeddings response from ${`${this.settings.client.where}/embeddings`} is invalid: ` +
              `expected ${this.dimensions}-dimensional vectors, got ${vector.length}`,
            { provider: PROVIDER },
          );
        }
        try {
          vectors.push(l2Normalize(vector));
        } catch {
          throw new EmbeddingsError(`embeddings response from ${`${this.settings.client.where}/embeddings`} is invalid: zero vector`, { provider: PROVIDER });
        }
      }
    }
    return vectors;
  }
}

/**
 * Builds an {@link OpenAIEmbedder}. When the vector length is neither configured
 * nor known for the model, embeds one short probe text to learn it.
 */
export async function createOpenAIEmbedder(options: OpenAIEmbedderOptions, embedOptions: EmbedOptions = {}): Promise<OpenAIEmbedder> {
  if (options.dimensions !== undefined || options.responseDimensions !== undefined || KNOWN_MODEL_DIMENSIONS.get(options.model) !== undefined) {
    return new OpenAIEmbedder(options);
  }
  const [probe] = await requestEmbeddings(buildSettings(options), ["dimension probe"], embedOptions.signal);
  return new OpenAIEmbedder({ ...options, responseDimensions: probe?.length });
}
