import { describe, expect, it } from "vitest";

import { convertTfGraphToOnnx, type TfGraphModel } from "../src/tf-to-onnx.js";

// A minimal graph in the bundled model's shape: the two int32 inputs, one float weight, and
// whatever node the case adds after them.
function graph(extra: { name: string; op: string; input?: string[]; attr?: Record<string, unknown> }[], weightBytes = 8): [TfGraphModel, Uint8Array[]] {
  const model = {
    modelTopology: {
      node: [{ name: "indices", op: "Placeholder" }, { name: "values", op: "Placeholder" }, { name: "w", op: "Const" }, ...extra],
    },
    weightsManifest: [{ paths: ["shard"], weights: [{ name: "w", shape: [2], dtype: "float32" }] }],
  } as TfGraphModel;
  return [model, [new Uint8Array(weightBytes)]];
}

describe("convertTfGraphToOnnx", () => {
  it("refuses an operator it does not translate, naming it and the node", () => {
    const [model, shards] = graph([{ name: "odd", op: "Cumsum", input: ["w"] }]);
    expect(() => convertTfGraphToOnnx(model, shards)).toThrow("TensorFlow operator Cumsum (odd) is not supported");
  });

  it("refuses weight shards that do not hold what the manifest describes", () => {
    const [model, shards] = graph([{ name: "out", op: "Tanh", input: ["w"] }], 12);
    expect(() => convertTfGraphToOnnx(model, shards)).toThrow("weight shards hold 12 bytes, the manifest describes 8");
  });

  it("refuses a transposed matrix product instead of computing another one", () => {
    const [model, shards] = graph([{ name: "out", op: "MatMul", input: ["w", "w"], attr: { transpose_a: { b: true } } }]);
    expect(() => convertTfGraphToOnnx(model, shards)).toThrow("out: transposed MatMul is not supported");
  });

  it("writes a model for a graph it can translate", () => {
    const [model, shards] = graph([{ name: "out", op: "Tanh", input: ["w"] }]);
    const bytes = convertTfGraphToOnnx(model, shards);
    // The weight's name and the output's name are in the serialised graph.
    const text = new TextDecoder("latin1").decode(bytes);
    expect(text).toContain("Tanh");
    expect(text).toContain("embeddings");
  });
});
