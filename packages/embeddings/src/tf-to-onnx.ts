// Translates the bundled model's TensorFlow graph (the TensorFlow.js graph-model JSON and its weight
// shards) into an ONNX graph, node by node, so ONNX Runtime runs exactly the computation TensorFlow.js
// runs. Only the operators and attribute combinations that graph uses are supported; anything else
// fails the conversion loudly instead of computing something else.
//
// Integer tensors: TensorFlow mixes int32 (shapes, indices) and int64 (the inputs); ONNX shape
// operators produce int64, so every integer tensor is int64 here. The two inputs stay int32, as the
// caller feeds them, and are widened on entry.
import { encodeOnnxModel, OnnxAttributeType, OnnxType, type OnnxAttribute, type OnnxNode, type OnnxTensor } from "./onnx-proto.js";

interface TfAttrValue {
  i?: string | number;
  f?: number;
  b?: boolean;
  s?: number[] | string;
  type?: number | string;
  list?: { i?: (string | number)[] };
}

interface TfNode {
  name: string;
  op: string;
  input?: string[];
  attr?: Record<string, TfAttrValue>;
}

interface TfWeightSpec {
  name: string;
  shape: number[];
  dtype: string;
  quantization?: unknown;
}

export interface TfGraphModel {
  modelTopology: { node: TfNode[] };
  weightsManifest: { paths: string[]; weights: TfWeightSpec[] }[];
}

/** Names of the converted graph's inputs and output. */
export const ONNX_INPUT_INDICES = "indices";
export const ONNX_INPUT_VALUES = "values";
export const ONNX_OUTPUT = "embeddings";

// TensorFlow DataType enum values found in the graph.
const TF_FLOAT = 1;
const TF_INT32 = 3;
const TF_INT64 = 9;
const TF_BOOL = 10;

/** ONNX's Slice clamps ends to the dimension, so "to the end" is any large number. */
const TO_END = 2 ** 31 - 1;

function onnxTypeOf(tfType: number): OnnxType {
  switch (tfType) {
    case TF_FLOAT:
      return OnnxType.FLOAT;
    case TF_INT32:
    case TF_INT64:
      return OnnxType.INT64;
    case TF_BOOL:
      return OnnxType.BOOL;
    default:
      throw new Error(`unsupported TensorFlow dtype ${tfType}`);
  }
}

function int64Bytes(values: readonly number[]): Uint8Array {
  return new Uint8Array(BigInt64Array.from(values, (v) => BigInt(v)).buffer);
}

/** The int64 copy of an int32 graph input. */
function widened(input: string): string {
  return `${input}/int64`;
}

/** A TensorFlow input reference ("node", "node:1") as an ONNX value name. */
function valueName(ref: string): string {
  if (ref.startsWith("^")) throw new Error(`control dependency ${ref} is not supported`);
  return ref.endsWith(":0") ? ref.slice(0, -2) : ref;
}

class Converter {
  readonly nodes: OnnxNode[] = [];
  readonly initializers: OnnxTensor[] = [];
  /** Integer constants by value name, for operators whose ONNX form needs them as attributes. */
  private readonly intConstants = new Map<string, number[]>();
  /** Ranks known at conversion time (enough for the operators that need one). */
  private readonly ranks = new Map<string, number>();
  private nextId = 0;

  constructor(private readonly weights: Map<string, { spec: TfWeightSpec; bytes: Uint8Array }>) {}

  private fresh(hint: string): string {
    return `${hint}/__onnx${this.nextId++}`;
  }

  private emit(opType: string, input: string[], output: string[], attribute: OnnxAttribute[] = []): void {
    this.nodes.push({ name: this.fresh(output[0]!), opType, input, output, attribute });
  }

  private int64Constant(hint: string, values: readonly number[], dims: number[] = [values.length]): string {
    const name = this.fresh(hint);
    this.initializers.push({ name, dims, dataType: OnnxType.INT64, rawData: int64Bytes(values) });
    return name;
  }

  private intsOf(ref: string): number[] {
    const values = this.intConstants.get(valueName(ref));
    if (values === undefined) throw new Error(`${ref} must be an integer constant`);
    return values;
  }

  private intOf(ref: string): number {
    const values = this.intsOf(ref);
    if (values.length !== 1) throw new Error(`${ref} must hold one integer`);
    return values[0]!;
  }

  private constant(node: TfNode): void {
    const weight = this.weights.get(node.name);
    if (weight === undefined) throw new Error(`constant ${node.name} has no weight data`);
    const { spec, bytes } = weight;
    if (spec.quantization !== undefined) throw new Error(`quantized weight ${spec.name} is not supported`);
    if (spec.dtype === "float32") {
      this.initializers.push({ name: node.name, dims: spec.shape, dataType: OnnxType.FLOAT, rawData: bytes });
    } else if (spec.dtype === "int32") {
      // A copy of exactly these bytes (a Buffer's slice() would share, and start at, the whole file).
      const values = Array.from(new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)));
      this.intConstants.set(node.name, values);
      this.initializers.push({ name: node.name, dims: spec.shape, dataType: OnnxType.INT64, rawData: int64Bytes(values) });
    } else {
      throw new Error(`weight ${spec.name} has unsupported dtype ${spec.dtype}`);
    }
  }

  convert(node: TfNode): void {
    const inputs = (node.input ?? []).map(valueName);
    const out = node.name;
    const attr = node.attr ?? {};
    const int = (key: string) => Number(attr[key]?.i ?? 0);
    const flag = (key: string) => attr[key]?.b === true;
    const ints = (key: string) => (attr[key]?.list?.i ?? []).map(Number);
    const unary = (opType: string) => this.emit(opType, [inputs[0]!], [out]);
    const binary = (opType: string) => this.emit(opType, [inputs[0]!, inputs[1]!], [out]);

    switch (node.op) {
      case "Const":
        return this.constant(node);
      case "Placeholder":
        // Fed as int32 by the caller, int64 in the TensorFlow graph: widened under a new name.
        return this.emit("Cast", [out], [widened(out)], [{ name: "to", type: OnnxAttributeType.INT, i: OnnxType.INT64 }]);
      case "Add":
      case "BiasAdd":
        if (node.op === "BiasAdd" && String.fromCharCode(...((attr.data_format?.s as number[] | undefined) ?? [])) !== "NHWC") {
          throw new Error(`${out}: only NHWC BiasAdd is supported`);
        }
        return binary("Add");
      case "Sub":
        return binary("Sub");
      case "Mul":
        return binary("Mul");
      case "RealDiv":
        return binary("Div");
      case "Maximum":
        return binary("Max");
      case "Less":
        return binary("Less");
      case "Greater":
        return binary("Greater");
      case "LogicalNot":
        return unary("Not");
      case "Sin":
        return unary("Sin");
      case "Cos":
        return unary("Cos");
      case "Tanh":
        return unary("Tanh");
      case "Relu":
        return unary("Relu");
      case "Shape":
        return unary("Shape");
      case "Square":
        return this.emit("Mul", [inputs[0]!, inputs[0]!], [out]);
      case "Rsqrt": {
        const root = this.fresh(out);
        this.emit("Sqrt", [inputs[0]!], [root]);
        this.emit("Reciprocal", [root], [out]);
        return;
      }
      case "Softmax":
        return this.emit("Softmax", [inputs[0]!], [out], [{ name: "axis", type: OnnxAttributeType.INT, i: -1 }]);
      case "Cast":
        return this.emit("Cast", [inputs[0]!], [out], [{ name: "to", type: OnnxAttributeType.INT, i: onnxTypeOf(Number(attr.DstT?.type)) }]);
      case "Where": {
        if (inputs.length !== 1) throw new Error(`${out}: only the one-input Where (coordinates of true elements) is supported`);
        // TensorFlow lists coordinates as rows ([n, rank]); ONNX NonZero as columns ([rank, n]).
        const columns = this.fresh(out);
        this.emit("NonZero", [inputs[0]!], [columns]);
        this.emit("Transpose", [columns], [out], [{ name: "perm", type: OnnxAttributeType.INTS, ints: [1, 0] }]);
        return;
      }
      case "Reshape":
        // allowzero: a 0 in the shape means an empty dimension, as in TensorFlow.
        return this.emit("Reshape", [inputs[0]!, inputs[1]!], [out], [{ name: "allowzero", type: OnnxAttributeType.INT, i: 1 }]);
      case "GatherV2":
        return this.emit("Gather", [inputs[0]!, inputs[1]!], [out], [{ name: "axis", type: OnnxAttributeType.INT, i: this.intOf(inputs[2]!) }]);
      case "GatherNd":
        return binary("GatherND");
      case "Max":
      case "Mean":
      case "Prod": {
        // Operator set 17 takes these axes as an attribute (ReduceSum alone takes an input).
        const opType = { Max: "ReduceMax", Mean: "ReduceMean", Prod: "ReduceProd" }[node.op];
        this.emit(
          opType,
          [inputs[0]!],
          [out],
          [
            { name: "axes", type: OnnxAttributeType.INTS, ints: this.intsOf(inputs[1]!) },
            { name: "keepdims", type: OnnxAttributeType.INT, i: flag("keep_dims") ? 1 : 0 },
          ],
        );
        return;
      }
      case "Sum":
        this.emit(
          "ReduceSum",
          [inputs[0]!, this.int64Constant(out, this.intsOf(inputs[1]!))],
          [out],
          [{ name: "keepdims", type: OnnxAttributeType.INT, i: flag("keep_dims") ? 1 : 0 }],
        );
        return;
      case "SparseToDense": {
        // (indices, output_shape, values, default): the default broadcast to the shape, then the values.
        const [indices, shape, values, fill] = inputs as [string, string, string, string];
        const dense = this.fresh(out);
        this.emit("Expand", [fill, shape], [dense]);
        this.emit("ScatterND", [dense, indices, values], [out]);
        return;
      }
      case "ScatterNd": {
        // (indices, updates, shape): zeros of the updates' type, with updates added in (TensorFlow sums duplicates).
        const [indices, updates, shape] = inputs as [string, string, string];
        const type = onnxTypeOf(Number(attr.T?.type));
        const zero = this.fresh(out);
        this.initializers.push({
          name: zero,
          dims: [],
          dataType: type,
          rawData: type === OnnxType.FLOAT ? new Uint8Array(4) : new Uint8Array(8),
        });
        const dense = this.fresh(out);
        this.emit("Expand", [zero, shape], [dense]);
        this.emit("ScatterND", [dense, indices, updates], [out], [{ name: "reduction", type: OnnxAttributeType.STRING, s: new TextEncoder().encode("add") }]);
        return;
      }
      case "ConcatV2": {
        const axis = this.intOf(inputs[inputs.length - 1]!);
        return this.emit("Concat", inputs.slice(0, -1), [out], [{ name: "axis", type: OnnxAttributeType.INT, i: axis }]);
      }
      case "Pack": {
        const axis = int("axis");
        const axes = this.int64Constant(out, [axis]);
        const parts = inputs.map((input) => {
          const part = this.fresh(out);
          this.emit("Unsqueeze", [input, axes], [part]);
          return part;
        });
        return this.emit("Concat", parts, [out], [{ name: "axis", type: OnnxAttributeType.INT, i: axis }]);
      }
      case "ExpandDims":
        return this.emit("Unsqueeze", [inputs[0]!, this.int64Constant(out, this.intsOf(inputs[1]!))], [out]);
      case "Squeeze": {
        const dims = ints("squeeze_dims");
        if (dims.length === 0) throw new Error(`${out}: Squeeze without explicit dimensions is not supported`);
        return this.emit("Squeeze", [inputs[0]!, this.int64Constant(out, dims)], [out]);
      }
      case "SplitV": {
        const sizes = this.intsOf(inputs[1]!);
        if (sizes.some((size) => size < 0)) throw new Error(`${out}: SplitV with an inferred size is not supported`);
        const outputs = sizes.map((_, k) => (k === 0 ? out : `${out}:${k}`));
        return this.emit("Split", [inputs[0]!, this.int64Constant(out, sizes)], outputs, [
          { name: "axis", type: OnnxAttributeType.INT, i: this.intOf(inputs[2]!) },
        ]);
      }
      case "Transpose": {
        const perm = this.intsOf(inputs[1]!);
        this.ranks.set(out, perm.length);
        return this.emit("Transpose", [inputs[0]!], [out], [{ name: "perm", type: OnnxAttributeType.INTS, ints: perm }]);
      }
      case "MatMul": {
        if (flag("transpose_a") || flag("transpose_b")) throw new Error(`${out}: transposed MatMul is not supported`);
        return binary("MatMul");
      }
      case "BatchMatMul": {
        if (flag("adj_x")) throw new Error(`${out}: BatchMatMul with adj_x is not supported`);
        let right = inputs[1]!;
        if (flag("adj_y")) {
          const rank = this.ranks.get(right);
          if (rank === undefined) throw new Error(`${out}: the rank of ${right} is not known`);
          const perm = Array.from({ length: rank }, (_, k) => k);
          [perm[rank - 2], perm[rank - 1]] = [perm[rank - 1]!, perm[rank - 2]!];
          right = this.fresh(out);
          this.emit("Transpose", [inputs[1]!], [right], [{ name: "perm", type: OnnxAttributeType.INTS, ints: perm }]);
        }
        return this.emit("MatMul", [inputs[0]!, right], [out]);
      }
      case "Slice": {
        // (input, begin, size) with size -1 meaning "to the end".
        const begin = this.intsOf(inputs[1]!);
        const size = this.intsOf(inputs[2]!);
        const ends = begin.map((start, k) => (size[k] === -1 ? TO_END : start + size[k]!));
        return this.emit(
          "Slice",
          [
            inputs[0]!,
            this.int64Constant(out, begin),
            this.int64Constant(out, ends),
            this.int64Constant(
              out,
              begin.map((_, k) => k),
            ),
          ],
          [out],
        );
      }
      case "StridedSlice":
        return this.stridedSlice(out, inputs, int("begin_mask"), int("end_mask"), int("shrink_axis_mask"), int("ellipsis_mask"), int("new_axis_mask"));
      case "Range":
        return this.emit("Range", [inputs[0]!, inputs[1]!, inputs[2]!], [out]);
      case "Conv2D":
        return this.pointwiseConv(node, inputs, ints("strides"), ints("dilations"));
      default:
        throw new Error(`TensorFlow operator ${node.op} (${out}) is not supported`);
    }
  }

  private stridedSlice(out: string, inputs: string[], beginMask: number, endMask: number, shrinkMask: number, ellipsisMask: number, newAxisMask: number): void {
    if (ellipsisMask !== 0 || newAxisMask !== 0) throw new Error(`${out}: StridedSlice with ellipsis or new axes is not supported`);
    const begin = this.intsOf(inputs[1]!);
    const end = this.intsOf(inputs[2]!);
    const strides = this.intsOf(inputs[3]!);
    const starts: number[] = [];
    const ends: number[] = [];
    const shrunk: number[] = [];
    begin.forEach((start, axis) => {
      const bit = 1 << axis;
      const stride = strides[axis]!;
      if (stride !== 1) throw new Error(`${out}: StridedSlice with stride ${stride} is not supported`);
      if ((shrinkMask & bit) !== 0) {
        // One element, then the axis is dropped; -1 (the last element) runs to the end.
        starts.push(start);
        ends.push(start === -1 ? TO_END : start + 1);
        shrunk.push(axis);
        return;
      }
      starts.push((beginMask & bit) !== 0 ? 0 : start);
      ends.push((endMask & bit) !== 0 ? TO_END : end[axis]!);
    });
    const sliced = shrunk.length === 0 ? out : this.fresh(out);
    this.emit(
      "Slice",
      [
        inputs[0]!,
        this.int64Constant(out, starts),
        this.int64Constant(out, ends),
        this.int64Constant(
          out,
          starts.map((_, k) => k),
        ),
      ],
      [sliced],
    );
    if (shrunk.length > 0) this.emit("Squeeze", [sliced, this.int64Constant(out, shrunk)], [out]);
  }

  /**
   * The graph's Conv2D nodes are 1×1 kernels with stride 1 over NHWC input: a matrix product over the
   * channel axis, which is what it becomes here (the kernel's bytes reshaped to [in, out]).
   */
  private pointwiseConv(node: TfNode, inputs: string[], strides: number[], dilations: number[]): void {
    const format = String.fromCharCode(...((node.attr?.data_format?.s as number[] | undefined) ?? []));
    const kernel = this.weights.get(inputs[1]!);
    const shape = kernel?.spec.shape ?? [];
    const unit = (list: number[]) => list.every((value) => value === 1);
    if (format !== "NHWC" || kernel === undefined || shape[0] !== 1 || shape[1] !== 1 || !unit(strides) || !unit(dilations)) {
      throw new Error(`${node.name}: only 1x1, stride-1 NHWC Conv2D with a constant kernel is supported`);
    }
    const matrix = this.fresh(node.name);
    this.initializers.push({ name: matrix, dims: [shape[2]!, shape[3]!], dataType: OnnxType.FLOAT, rawData: kernel.bytes });
    this.emit("MatMul", [inputs[0]!, matrix], [node.name]);
  }
}

const BYTES_PER_ELEMENT: Record<string, number> = { float32: 4, int32: 4 };

/**
 * Converts a TensorFlow.js graph model into ONNX model bytes. `weightData` is the manifest's weight
 * files one after another, which hold every weight in manifest order.
 */
export function convertTfGraphToOnnx(model: TfGraphModel, weightData: Uint8Array): Uint8Array {
  const weights = new Map<string, { spec: TfWeightSpec; bytes: Uint8Array }>();
  let offset = 0;
  for (const spec of model.weightsManifest.flatMap((group) => group.weights)) {
    const size = BYTES_PER_ELEMENT[spec.dtype];
    if (size === undefined) throw new Error(`weight ${spec.name} has unsupported dtype ${spec.dtype}`);
    const length = spec.shape.reduce((product, dim) => product * dim, 1) * size;
    weights.set(spec.name, { spec, bytes: weightData.subarray(offset, offset + length) });
    offset += length;
  }
  if (offset !== weightData.byteLength) throw new Error(`weight files hold ${weightData.byteLength} bytes, the manifest describes ${offset}`);

  const nodes = model.modelTopology.node;
  const placeholders = nodes.filter((node) => node.op === "Placeholder").map((node) => node.name);
  if (placeholders.join(",") !== [ONNX_INPUT_INDICES, ONNX_INPUT_VALUES].join(",")) {
    throw new Error(`expected inputs ${ONNX_INPUT_INDICES} and ${ONNX_INPUT_VALUES}, found ${placeholders.join(", ")}`);
  }
  const consumed = new Set(nodes.flatMap((node) => (node.input ?? []).map((ref) => valueName(ref).replace(/:\d+$/, ""))));
  const sinks = nodes.filter((node) => !consumed.has(node.name) && node.op !== "Const" && node.op !== "Placeholder");
  if (sinks.length !== 1) throw new Error(`expected one output node, found ${sinks.length}`);

  const converter = new Converter(weights);
  // The ONNX inputs keep the placeholders' names; their readers take the widened copies.
  const inputs = new Set(placeholders);
  for (const node of nodes) {
    const input = node.input?.map((ref) => (inputs.has(valueName(ref)) ? widened(valueName(ref)) : ref));
    converter.convert(input === undefined ? node : { ...node, input });
  }
  converter.nodes.push({ name: ONNX_OUTPUT, opType: "Identity", input: [sinks[0]!.name], output: [ONNX_OUTPUT] });

  return encodeOnnxModel({
    name: "use-lite",
    nodes: converter.nodes,
    initializers: converter.initializers,
    inputs: [
      { name: ONNX_INPUT_INDICES, elemType: OnnxType.INT32, shape: ["tokens", 2] },
      { name: ONNX_INPUT_VALUES, elemType: OnnxType.INT32, shape: ["tokens"] },
    ],
    outputs: [{ name: ONNX_OUTPUT, elemType: OnnxType.FLOAT, shape: ["texts", 512] }],
  });
}
