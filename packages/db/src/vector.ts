import pgvector from "pgvector";

/** pgvector's text form, '[0.1,0.2,…]', for binding a vector as a query parameter. */
export function toVectorLiteral(vector: readonly number[]): string {
  vector.forEach((x, i) => {
    if (!Number.isFinite(x)) throw new RangeError(`toVectorLiteral: element ${i} is not a finite number`);
  });
  return pgvector.toSql([...vector]) as string;
}

/** pgvector stores at most this many dimensions. */
const MAX_VECTOR_DIMENSIONS = 16_000;

/**
 * pgvector's binary wire form (vector_recv: int16 dimensions, int16 zero, then each element as a
 * big-endian float4), for binding a vector as a binary query parameter: pg sends a Buffer value in
 * binary format. The server then skips parsing ~500 decimal numbers, which inside PGlite (compiled
 * to WebAssembly) cost ~0.8 ms per 512-dimension query vector. Each element is rounded to float4
 * as the server would round it, so the stored or compared vector is the text form's, bit for bit.
 */
export function toVectorBinary(vector: readonly number[]): Buffer {
  if (vector.length > MAX_VECTOR_DIMENSIONS) throw new RangeError(`toVectorBinary: more than ${MAX_VECTOR_DIMENSIONS} dimensions`);
  const out = Buffer.alloc(4 + 4 * vector.length);
  out.writeInt16BE(vector.length, 0);
  vector.forEach((x, i) => {
    if (!Number.isFinite(x) || Math.abs(Math.fround(x)) === Infinity) throw new RangeError(`toVectorBinary: element ${i} is not a finite float4`);
    // -0 as 0, as the text form writes it.
    out.writeFloatBE(x === 0 ? 0 : x, 4 + 4 * i);
  });
  return out;
}

/** A vector as a statement binds it: pgvector's binary form, with the model and length stored beside it. */
export interface VectorParam {
  binary: Buffer;
  model: string;
  dimensions: number;
}

/** The one way a model's vector becomes a statement parameter (writes and searches alike). */
export function vectorParam(vector: readonly number[], model: string): VectorParam {
  return { binary: toVectorBinary(vector), model, dimensions: vector.length };
}

/**
 * Reads pgvector's binary form back (what toVectorBinary writes and what `vector_send` answers):
 * the vector's elements as float4, the same bits the server holds.
 */
export function fromVectorBinary(binary: Uint8Array): Float32Array {
  const view = new DataView(binary.buffer, binary.byteOffset, binary.byteLength);
  if (binary.byteLength < 4) throw new RangeError("fromVectorBinary: shorter than its header");
  const dimensions = view.getInt16(0);
  if (dimensions < 0 || binary.byteLength !== 4 + 4 * dimensions) throw new RangeError("fromVectorBinary: length does not match its dimensions");
  const out = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) out[i] = view.getFloat32(4 + 4 * i);
  return out;
}
