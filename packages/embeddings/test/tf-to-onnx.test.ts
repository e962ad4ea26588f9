import { describe, expect, it } from "vitest";

import { convertTfGraphToOnnx, type TfGraphModel } from "../src/tf-to-onnx.js";

// A minimal graph in the bundled model's shape: the two int32 inputs, one float weight, and
// whatever node the case adds after them.
function graph(extra: { name: string; op: string; input?: string[]; attr?: Record<string, unknown> }[], weightBytes = 8): [TfGraphModel, Uint8Array] {
  const model = {
    modelTopology: {
      node: [{ name: "indices", op: "Placeholder" }, { name: "values", op: "Placeholder" }, { name: "w", op: "Const" }, ...extra],
    },
    weightsManifest: [{ paths: ["shard"], weights: [{ name: "w", shape: [2], dtype: "float32" }] }],
  } as TfGraphModel;
  return [model, new Uint8Array(weightBytes)];
}

describe("convertTfGraphToOnnx", () => {
  it("refuses an operator it does not translate, naming it and the node", () => {
    const [model, weights] = graph([{ name: "odd", op: "Cumsum", input: ["w"] }]);
    expect(() => convertTfGraphToOnnx(model, weights)).toThrow("TensorFlow operator Cumsum (odd) is not supported");
  });

  it("refuses weight files that do not hold what the manifest describes", () => {
    const [model, weights] = graph([{ name: "out", op: "Tanh", input: ["w"] }], 12);
    expect(() => convertTfGraphToOnnx(model, weights)).toThrow("weight files hold 12 bytes, the manifest describes 8");
  });

  it("refuses a transposed matrix product instead of computing another one", () => {
    const [model, weights] = graph([{ name: "out", op: "MatMul", input: ["w", "w"], attr: { transpose_a: { b: true } } }]);
    expect(() => convertTfGraphToOnnx(model, weights)).toThrow("out: transposed MatMul is not supported");
  });

  it("writes a model for a graph it can translate", () => {
    const [model, weights] = graph([{ name: "out", op: "Tanh", input: ["w"] }]);
    const bytes = convertTfGraphToOnnx(model, weights);
    // The weight's name and the output's name are in the serialised graph.
    const text = new TextDecoder("latin1").decode(bytes);
    expect(text).toContain("Tanh");
    expect(text).toContain("embeddings");
  });

  it("reads integer constants from where they sit in a Buffer of all the weight files", () => {
    // The loader hands over a Buffer (Buffer.concat of the files); a small one lies in Node's shared
    // pool, so its data starts at an offset and a Buffer's slice() would not copy it.
    const ints = (...values: number[]) => Buffer.from(new Int32Array(values).buffer);
    const weightData = Buffer.concat([Buffer.from(new Float32Array([1.5, 2.5]).buffer), ints(0), ints(1), ints(1)]);
    expect(weightData.byteOffset).not.toBe(0);
    const model = {
      modelTopology: {
        node: [
          { name: "indices", op: "Placeholder" },
          { name: "values", op: "Placeholder" },
          { name: "w", op: "Const" },
          { name: "begin", op: "Const" },
          { name: "end", op: "Const" },
          { name: "strides", op: "Const" },
          { name: "out", op: "StridedSlice", input: ["w", "begin", "end", "strides"] },
        ],
      },
      weightsManifest: [
        {
          paths: ["shard"],
          weights: [
            { name: "w", shape: [2], dtype: "float32" },
            { name: "begin", shape: [1], dtype: "int32" },
            { name: "end", shape: [1], dtype: "int32" },
            { name: "strides", shape: [1], dtype: "int32" },
          ],
        },
      ],
    } as TfGraphModel;
    const text = new TextDecoder("latin1").decode(convertTfGraphToOnnx(model, weightData));
    expect(text).toContain("Slice");
  });
});
