import { STATUS_CODES } from "node:http";
import { isRetryableUpstreamStatus } from "@3ngram/errors";

import { l2Normalize } from "./cosine.js";
import type { EmbedOptions, Embedder } from "./embedder.js";
import { EmbeddingsError } from "./errors.js";
import { checkMaxInputChars, DEFAULT_MAX_INPUT_CHARS, prepareText } from "./input.js";

export const DEFAULT_OPENAI_TIMEOUT_MS = 30_000;
/** Texts per request; OpenAI accepts up to 2048, smaller batches keep requests modest. */
export const DEFAULT_OPENAI_BATCH_SIZE = 128;

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

/** Endpoint URL for error messages: no credentials, query string or fragment. */
function describeUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/** Extracts a short machine-readable error code from an error body, never free text. */
function errorCodeFrom(body: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const error = (parsed as { error?: unknown }).error;
  if (typeof error !== "object" || error === null) return undefined;
  for (const key of ["code", "type"] as const) {
    const value = (error as Record<string, unknown>)[key];
    if (typeof value === "string" && /^[A-Za-z0-9_.-]{1,64}$/.test(value)) return value;
  }
  return undefined;
}

interface RequestSettings {
  url: URL;
  model: string;
  apiKey: string | undefined;
  requestDimensions: number | undefined;
  timeoutMs: number;
  fetchImpl: typeof fetch;
}

function buildSettings(options: OpenAIEmbedderOptions): RequestSettings {
  if (options.model.trim() === "") throw new RangeError("OpenAIEmbedder: model must not be empty");
  let url: URL;
  try {
    url = new URL(`${options.baseUrl.replace(/\/+$/, "")}/embeddings`);
  } catch {
    throw new RangeError("OpenAIEmbedder: baseUrl is not a valid URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new RangeError("OpenAIEmbedder: baseUrl must use http or https");
  }
  return {
    url,
    model: options.model,
    apiKey: options.apiKey,
    requestDimensions: options.dimensions === undefined ? undefined : positiveInteger("dimensions", options.dimensions),
    timeoutMs: positiveInteger("timeoutMs", options.timeoutMs ?? DEFAULT_OPENAI_TIMEOUT_MS),
    fetchImpl: options.fetch ?? globalThis.fetch,
  };
}

/** One POST to the embeddings endpoint; returns raw vectors in input order. */
async function requestEmbeddings(settings: RequestSettings, inputs: string[], callerSignal: AbortSignal | undefined): Promise<number[][]> {
  const where = describeUrl(settings.url);
  const timeoutSignal = AbortSignal.timeout(settings.timeoutMs);
  const signal = callerSignal === undefined ? timeoutSignal : AbortSignal.any([callerSignal, timeoutSignal]);

  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json",
  };
  if (settings.apiKey !== undefined && settings.apiKey !== "") {
    headers["authorization"] = `Bearer ${settings.apiKey}`;
  }
  const body: { model: string; input: string[]; dimensions?: number } = {
    model: settings.model,
    input: inputs,
  };
  if (settings.requestDimensions !== undefined) body.dimensions = settings.requestDimensions;

  let status: number;
  let text: string;
  try {
    const response = await settings.fetchImpl(settings.url, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      signal,
    });
    status = response.status;
    text = await response.text();
  } catch (error) {
    if (callerSignal?.aborted) throw callerSignal.reason;
    if (timeoutSignal.aborted) {
      throw new EmbeddingsError(`embeddings request to ${where} timed out after ${settings.timeoutMs} ms`, {
        provider: PROVIDER,
        retryable: true,
      });
    }
    // fetch() reports network failures as TypeError("fetch failed") with a
    // system error as the cause; only its code is surfaced in the message.
    const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
    const code = typeof cause?.code === "string" ? cause.code : ((error as Error | null)?.name ?? "unknown error");
    throw new EmbeddingsError(`embeddings request to ${where} failed: ${code}`, {
      provider: PROVIDER,
      retryable: true,
      cause: error,
    });
  }

  if (status < 200 || status >= 300) {
    // The reason phrase comes from Node's table, not the server, and of the body
    // only a short code is kept: servers may echo the request in either.
    const phrase = STATUS_CODES[status];
    const code = errorCodeFrom(text);
    const reason = `HTTP ${status}${phrase ? ` ${phrase}` : ""}${code ? ` (${code})` : ""}`;
    throw new EmbeddingsError(`embeddings request to ${where} failed: ${reason}`, {
      provider: PROVIDER,
      status,
      retryable: isRetryableUpstreamStatus(status),
    });
  }

  const invalid = (problem: string): EmbeddingsError =>
    new EmbeddingsError(`embeddings response from ${where} is invalid: ${problem}`, {
      provider: PROVIDER,
      status,
    });

  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid("body is not JSON");
  }
  const data = (parsed as { data?: unknown } | null)?.data;
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
 * gateways, vLLM, Ollama, LiteLLM, ...). Uses the global `fetch`.
 */
export class OpenAIEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;
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
            `embeddings response from ${describeUrl(this.settings.url)} is invalid: ` + `expected ${this.dimensions}-dimensional vectors, got ${vector.length}`,
            { provider: PROVIDER },
          );
        }
        try {
          vectors.push(l2Normalize(vector));
        } catch {
          throw new EmbeddingsError(`embeddings response from ${describeUrl(this.settings.url)} is invalid: zero vector`, { provider: PROVIDER });
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
