import type * as grpc from "@grpc/grpc-js";
import { fromBinary, toBinary, type DescService } from "@bufbuild/protobuf";

/**
 * Builds a grpc-js service definition from a protobuf-es service descriptor, so the generated
 * protobuf-es types are the only TypeScript for our messages (no proto-loader, no copies).
 */
export function grpcServiceDefinition(service: DescService): grpc.ServiceDefinition {
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const method of service.methods) {
    definition[method.localName] = {
      path: `/${service.typeName}/${method.name}`,
      originalName: method.name,
      requestStream: method.methodKind === "client_streaming" || method.methodKind === "bidi_streaming",
      responseStream: method.methodKind === "server_streaming" || method.methodKind === "bidi_streaming",
      requestSerialize: (message) => Buffer.from(toBinary(method.input, message as never)),
      requestDeserialize: (bytes) => fromBinary(method.input, bytes),
      responseSerialize: (message) => Buffer.from(toBinary(method.output, message as never)),
      responseDeserialize: (bytes) => fromBinary(method.output, bytes),
    };
  }
  return definition;
}
