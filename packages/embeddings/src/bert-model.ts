/**
 * A BERT-style sentence encoder (bge, e5, MiniLM) on ONNX Runtime: Hugging Face's tokenizer.json
 * read by tokenizers.js, the int8 graph fetched into the cache, and the model's own pooling.
 * Answers raw vectors; the caller normalises them (embedPreparedBatch), like every local backend.
 */
import { readFile } from "node:fs/promises";

import type { InferenceSession, Tensor } from "onnxruntime-node";

import type { BertModelSpec } from "./bundled-models.js";
import type { LocalModelRunner } from "./model-runner.js";
import { requireCachedModel } from "./model-cache.js";

/** ONNX Runtime's "error" level: its load-time notices are noise here. */
const ORT_LOG_ERRORS_ONLY = 3;

/** What the encoder reads from tokenizers.js (the part of its Tokenizer this module uses). */
interface WordPieceTokenizer {
  encode(text: string): { ids: number[] };
}

/**
 * Cuts a tokenised text to `maxTokens`, keeping the final separator the model expects after the
 * last word, as the reference tokenizer's truncation does (tokenizers.js has no truncation of its
 * own and ignores the settings in tokenizer.json).
 */
export function truncateIds(ids: readonly number[], maxTokens: number): number[] {
  if (ids.length <= maxTokens) return [...ids];
  return [...ids.slice(0, maxTokens - 1), ids[ids.length - 1]!];
}

/**
 * One text's vector from the encoder's last hidden state ([1, tokens, width], row-major): the first
 * token's vector (CLS pooling), or the mean over every token (mean pooling).
 */
export function poolHiddenState(hidden: Float32Array, tokens: number, width: number, pooling: BertModelSpec["pooling"]): number[] {
  const vector = new Array<number>(width).fill(0);
  if (pooling === "cls") {
    for (let d = 0; d < width; d++) vector[d] = hidden[d]!;
    return vector;
  }
  for (let token = 0; token < tokens; token++) {
    for (let d = 0; d < width; d++) vector[d]! += hidden[token * width + d]!;
  }
  return vector.map((sum) => sum / tokens);
}

export async function loadBertModel(spec: BertModelSpec, cacheDir: string): Promise<LocalModelRunner> {
  const files = requireCachedModel(cacheDir, spec);
  const [ort, { Tokenizer }, tokenizerJson] = await Promise.all([
    import("onnxruntime-node"),
    import("@huggingface/tokenizers"),
    readFile(files.tokenizer, "utf8").then((text) => JSON.parse(text) as object),
  ]);
  const tokenizer: WordPieceTokenizer = new Tokenizer(tokenizerJson, {});
  const session: InferenceSession = await ort.InferenceSession.create(files.onnx, {
    // One thread per model: parallelism comes from the worker pool, and the machines are small.
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
    // A memory pattern is a plan of the run's allocations kept for each input shape it has seen,
    // which pays off when shapes repeat. Every text has its own length, so the plans only pile up:
    // over 200 lengths they held 10 MB per session, and runs were no faster with them
    // (docs/benchmarks.md, 2026-12-07 21:00, issue 32).
    enableMemPattern: false,
    logSeverityLevel: ORT_LOG_ERRORS_ONLY,
  });
  const wantsTokenTypes = session.inputNames.includes("token_type_ids");
  const outputName = session.outputNames[0]!;

  /** One text through the encoder: its token ids in, its pooled vector out. */
  const embedOne = async (text: string): Promise<number[]> => {
    const tokens = truncateIds(tokenizer.encode(text).ids, spec.maxTokens);
    const shape = [1, tokens.length];
    const feeds: Record<string, Tensor> = {
      input_ids: new ort.Tensor("int64", BigInt64Array.from(tokens, BigInt), shape),
      // One text, no padding: every position is attended to, and every token type is 0 (one segment).
      attention_mask: new ort.Tensor("int64", new BigInt64Array(tokens.length).fill(1n), shape),
    };
    if (wantsTokenTypes) feeds.token_type_ids = new ort.Tensor("int64", new BigInt64Array(tokens.length), shape);
    const result = await session.run(feeds);
    const hidden = result[outputName];
    if (hidden === undefined) throw new Error(`the ONNX model returned no ${outputName}`);
    const vector = poolHiddenState(hidden.data as Float32Array, tokens.length, Number(hidden.dims[2]), spec.pooling);
    hidden.dispose();
    return vector;
  };

  return {
    // One inference per text, never a padded batch. The int8 graphs quantise each activation
    // tensor with one scale computed over the whole batch, so texts batched together change each
    // other's vectors (cosine 0.98-0.99 against the same text alone): a stored vector would depend
    // on what else was written at the time. On one thread a batch is no faster per text anyway
    // (measured: 46 texts/s alone, 37 in batches of 16, bge-small; docs/evals.md).
    async embed(texts) {
      const vectors: number[][] = [];
      for (const text of texts) vectors.push(await embedOne(text));
      return vectors;
    },
  };
}
