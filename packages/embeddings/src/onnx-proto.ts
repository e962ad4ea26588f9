// The part of the ONNX file format (onnx.proto, IR version 8) that the converted bundled model
// needs, declared for protobufjs. Field numbers are ONNX's; only messages and fields the converter
// writes are listed, which readers accept because protobuf ignores nothing it was not sent.
import protobuf from "protobufjs";

/** ONNX element types (TensorProto.DataType) the converted graph uses. */
export const OnnxType = { FLOAT: 1, INT32: 6, INT64: 7, BOOL: 9 } as const;
export type OnnxType = (typeof OnnxType)[keyof typeof OnnxType];

/** AttributeProto.AttributeType values the converter writes. */
export const OnnxAttributeType = { FLOAT: 1, INT: 2, STRING: 3, TENSOR: 4, INTS: 7 } as const;

export interface OnnxTensor {
  name: string;
  dims: number[];
  dataType: OnnxType;
  rawData: Uint8Array;
}

export interface OnnxAttribute {
  name: string;
  type: (typeof OnnxAttributeType)[keyof typeof OnnxAttributeType];
  f?: number;
  i?: number;
  s?: Uint8Array;
  t?: OnnxTensor;
  ints?: number[];
}

export interface OnnxNode {
  name: string;
  opType: string;
  input: string[];
  output: string[];
  attribute?: OnnxAttribute[];
}

interface OnnxValueInfo {
  name: string;
  elemType: OnnxType;
  /** A number for a fixed size, a string for a named dynamic one. */
  shape: (number | string)[];
}

export interface OnnxGraph {
  name: string;
  nodes: OnnxNode[];
  initializers: OnnxTensor[];
  inputs: OnnxValueInfo[];
  outputs: OnnxValueInfo[];
}

const root = protobuf.Root.fromJSON({
  nested: {
    onnx: {
      nested: {
        ModelProto: {
          fields: {
            irVersion: { id: 1, type: "int64" },
            producerName: { id: 2, type: "string" },
            graph: { id: 7, type: "GraphProto" },
            opsetImport: { id: 8, type: "OperatorSetIdProto", rule: "repeated" },
          },
        },
        OperatorSetIdProto: { fields: { domain: { id: 1, type: "string" }, version: { id: 2, type: "int64" } } },
        GraphProto: {
          fields: {
            node: { id: 1, type: "NodeProto", rule: "repeated" },
            name: { id: 2, type: "string" },
            initializer: { id: 5, type: "TensorProto", rule: "repeated" },
            input: { id: 11, type: "ValueInfoProto", rule: "repeated" },
            output: { id: 12, type: "ValueInfoProto", rule: "repeated" },
          },
        },
        NodeProto: {
          fields: {
            input: { id: 1, type: "string", rule: "repeated" },
            output: { id: 2, type: "string", rule: "repeated" },
            name: { id: 3, type: "string" },
            opType: { id: 4, type: "string" },
            attribute: { id: 5, type: "AttributeProto", rule: "repeated" },
          },
        },
        AttributeProto: {
          fields: {
            name: { id: 1, type: "string" },
            f: { id: 2, type: "float" },
            i: { id: 3, type: "int64" },
            s: { id: 4, type: "bytes" },
            t: { id: 5, type: "TensorProto" },
            ints: { id: 8, type: "int64", rule: "repeated" },
            type: { id: 20, type: "int32" },
          },
        },
        TensorProto: {
          fields: {
            dims: { id: 1, type: "int64", rule: "repeated" },
            dataType: { id: 2, type: "int32" },
            name: { id: 8, type: "string" },
            rawData: { id: 9, type: "bytes" },
          },
        },
        ValueInfoProto: { fields: { name: { id: 1, type: "string" }, type: { id: 2, type: "TypeProto" } } },
        TypeProto: {
          fields: { tensorType: { id: 1, type: "TensorTypeProto" } },
        },
        TensorTypeProto: {
          fields: { elemType: { id: 1, type: "int32" }, shape: { id: 2, type: "TensorShapeProto" } },
        },
        TensorShapeProto: { fields: { dim: { id: 1, type: "Dimension", rule: "repeated" } } },
        Dimension: { fields: { dimValue: { id: 1, type: "int64" }, dimParam: { id: 2, type: "string" } } },
      },
    },
  },
});
const ModelProto = root.lookupType("onnx.ModelProto");

/** IR version 8 with the default operator set 17: what the converter's operators are written against. */
const IR_VERSION = 8;
const OPSET_VERSION = 17;

function valueInfo(info: OnnxValueInfo) {
  return {
    name: info.name,
    type: {
      tensorType: {
        elemType: info.elemType,
        shape: { dim: info.shape.map((dim) => (typeof dim === "number" ? { dimValue: dim } : { dimParam: dim })) },
      },
    },
  };
}

/** Serialises a graph as an ONNX model file. */
export function encodeOnnxModel(graph: OnnxGraph): Uint8Array {
  const message = ModelProto.fromObject({
    irVersion: IR_VERSION,
    producerName: "3ngram",
    opsetImport: [{ domain: "", version: OPSET_VERSION }],
    graph: {
      name: graph.name,
      node: graph.nodes,
      initializer: graph.initializers,
      input: graph.inputs.map(valueInfo),
      output: graph.outputs.map(valueInfo),
    },
  });
  return ModelProto.encode(message).finish();
}
