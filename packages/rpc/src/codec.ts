/**
 * How one RPC's values become bytes and back: one function per direction, so a hop over gRPC is one
 * change of representation each way. Two kinds:
 *
 * - messageCodecs: protobuf-es messages (raw clients and handlers, for tests of the gRPC layer).
 * - publicCodecs: the public zod shapes straight to bytes and back (docs/adr/0040). The protobuf
 *   message exists only inside encode and decode, as the proto JSON does inside toWire.
 *
 * Decoding never validates: the receiving trust boundary does that in its handler path, where a
 * refusal becomes INVALID_ARGUMENT naming the field (grpc-js would turn a deserializer's throw into
 * INTERNAL, and before the caller's credential was even checked).
 */
import { create, fromBinary, toBinary, type DescMethod } from "@bufbuild/protobuf";
import type { z } from "zod";
import { toWire, wireValue } from "./wire-shape.js";

/** One RPC's public shapes: what its caller sends (validated by the service) and what it answers. */
export interface MethodContract {
  request: z.ZodType;
  response: z.ZodType;
}

/** One direction of one RPC: a value to the bytes on the wire and back. */
interface WireCodec {
  encode(value: unknown): Buffer;
  decode(bytes: Buffer): unknown;
}

/** Both directions of one RPC. */
export interface MethodCodecs {
  request: WireCodec;
  response: WireCodec;
}

/** Protobuf-es messages (or their init shapes, on the way out) as they are. */
export function messageCodecs(method: DescMethod): MethodCodecs {
  const codec = (desc: DescMethod["input"]): WireCodec => ({
    encode: (value) => bytesOf(toBinary(desc, create(desc, value as never))),
    decode: (bytes) => fromBinary(desc, bytes),
  });
  return { request: codec(method.input), response: codec(method.output) };
}

/**
 * A request whose message arrived but has no public form (a Timestamp outside RFC 3339's years, a
 * NaN in a Struct): carried to the handler path, which refuses it after the credential check, as
 * a failure there is answered (a logged, counted status with its details).
 */
export class Unreadable {
  constructor(readonly reason: unknown) {}
}

/** The public shapes of one RPC's contract entry, to bytes and back; unvalidated both ways. */
export function publicCodecs(method: DescMethod, contract: MethodContract): MethodCodecs {
  return {
    request: {
      encode: (value) => bytesOf(toBinary(method.input, toWire(method.input, value))),
      decode: (bytes) => {
        const message = fromBinary(method.input, bytes);
        try {
          return wireValue(contract.request, method.input, message);
        } catch (err) {
          return new Unreadable(err);
        }
      },
    },
    response: {
      encode: (value) => bytesOf(toBinary(method.output, toWire(method.output, value))),
      decode: (bytes) => wireValue(contract.response, method.output, fromBinary(method.output, bytes)),
    },
  };
}

/** The encoded bytes as the Buffer grpc-js takes, without copying them (toBinary's array is ours alone). */
const bytesOf = (array: Uint8Array): Buffer => Buffer.from(array.buffer, array.byteOffset, array.byteLength);
