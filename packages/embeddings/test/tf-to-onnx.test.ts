import { describe, expect, it } from "vitest";

import { convertTfGraphToOnnx, type TfGraphModel } from "../src/tf-to-onnx.js";

type Weight = { name: string; shape: number[]; dtype: string };

// A minimal graph in the bundled model's shape: the two int32 inputs, one float weight (plus any
// constants the case adds, stored after it), and whatever node the case adds after them.
function graph(
  extra: { name: string; op: string; input?: string[]; attr?: Record<string, unknown> }[],
  weightData: Uint8Array = new Uint8Array(8),
  constants: Weight[] = [],
): [TfGraphModel, Uint8Array] {
  const weights: Weight[] = [{ name: "w", shape: [2], dtype: "float32" }, ...constants];
  const model = {
    modelTopology: {
      node: [{ name: "indices", op: "Placeholder" }, { name: "values", op: "Placeholder" }, ...weights.map((w) => ({ name: w.name, op: "Const" })), ...extra],
    },
    weightsManifest: [{ paths: ["shard"], weights }],
  } as TfGraphModel;
  return [model, weightData];
}

describe("convertTfGraphToOnnx", () => {
  it("refuses an operator it does not translate, naming it and the node", () => {
    const [model, weights] = graph([{ name: "odd", op: "Cumsum", input: ["w"] }]);
    expect(() => convertTfGraphToOnnx(model, weights)).toThrow("TensorFlow operator Cumsum (odd) is not supported");
  });

  it("refuses weight files that do not hold what the manifest describes", () => {
    const [model, weights] = graph([{ name: "out", op: "Tanh", input: ["w"] }], new Uint8Array(12));
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
    const int32 = (name: string): Weight => ({ name, shape: [1], dtype: "int32" });
    const [model] = graph([{ name: "out", op: "StridedSlice", input: ["w", "begin", "end", "strides"] }], weightData, [
      int32("begin"),
      int32("end"),
      int32("strides"),
    ]);
    const text = new TextDecoder("latin1").decode(convertTfGraphToOnnx(model, weightData));
    expect(text).toContain("Slice");
  });
});
