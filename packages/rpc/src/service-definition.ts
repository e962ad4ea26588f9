/**
 * grpc-js method definitions built from protobuf-es service descriptors, so the generated
 * protobuf-es types are the only TypeScript for our messages (no proto-loader, no copies), and the
 * codecs our own clients and servers pass values through: one function per direction from a value
 * to the bytes on the wire and back (messageCodecs here, publicCodecs in bridge.ts).
 */
import type * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary, type DescMethod, type DescService } from "@bufbuild/protobuf";

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

/** Protobuf-es messages (or their init shapes, on the way out) as they are: raw clients and handlers, for tests of the gRPC layer. */
export function messageCodecs(method: DescMethod): MethodCodecs {
  const codec = (desc: DescMethod["input"]): WireCodec => ({
    encode: (value) => bytesOf(toBinary(desc, create(desc, value as never))),
    decode: (bytes) => fromBinary(desc, bytes),
  });
  return { request: codec(method.input), response: codec(method.output) };
}

/** The encoded bytes as the Buffer grpc-js takes, without copying them (toBinary's array is ours alone). */
export const bytesOf = (array: Uint8Array): Buffer => Buffer.from(array.buffer, array.byteOffset, array.byteLength);

/** A definition where grpc-js serialises the messages itself: for a plain grpc-js server or client (a foreign peer in tests). */
export function grpcServiceDefinition(service: DescService): grpc.ServiceDefinition {
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const method of service.methods) {
    definition[method.localName] = {
      ...methodShape(service, method),
      requestSerialize: (message) => Buffer.from(toBinary(method.input, message as never)),
      requestDeserialize: (bytes) => fromBinary(method.input, bytes),
      responseSerialize: (message) => Buffer.from(toBinary(method.output, message as never)),
      responseDeserialize: (bytes) => fromBinary(method.output, bytes),
    };
  }
  return definition;
}

/**
 * The definition our own clients and servers use: a value is encoded on our side of grpc-js (in
 * the call or the handler path, so a value that cannot be written fails there like any other
 * error, with its status details) and grpc-js passes the bytes on; what arrives is decoded by the
 * method's codec. Only the methods given codecs are defined.
 */
export function codecServiceDefinition(service: DescService, codecs: ReadonlyMap<DescMethod, MethodCodecs>): grpc.ServiceDefinition {
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [method, { request, response }] of codecs) {
    definition[method.localName] = {
      ...methodShape(service, method),
      requestSerialize: passBytes,
      requestDeserialize: (bytes) => request.decode(bytes),
      responseSerialize: passBytes,
      responseDeserialize: (bytes) => response.decode(bytes),
    };
  }
  return definition;
}

const passBytes = (bytes: unknown): Buffer => bytes as Buffer;

function methodShape(service: DescService, method: DescMethod) {
  return {
    path: `/${service.typeName}/${method.name}`,
    originalName: method.name,
    requestStream: method.methodKind === "client_streaming" || method.methodKind === "bidi_streaming",
    responseStream: method.methodKind === "server_streaming" || method.methodKind === "bidi_streaming",
  };
}
