import * as grpc from "@grpc/grpc-js";
import type { DescMethod } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { STATUS_DETAILS_TRAILER } from "./status-details.js";

/** Calls the .proto marks safe to repeat: reads (NO_SIDE_EFFECTS) and repeatable changes (IDEMPOTENT, like stamping a key's last use). */
export function isRetryableRead(method: DescMethod): boolean {
  return method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS || method.idempotency === MethodOptions_IdempotencyLevel.IDEMPOTENT;
}

/**
 * Whether a failed call of a retryable read should be sent once more by us, because grpc-js will
 * not have: its retry policy stops retrying a call as soon as the server's response headers arrive
 * (the call is "committed"). A replica frozen or killed between sending its headers (and perhaps
 * the answer) and its trailers leaves exactly that: headers in, then the connection gone, and a
 * bare UNAVAILABLE that no server wrote (ours always carry a google.rpc.Status). Any other failure
 * was either retried by the channel already or is the server's own answer.
 */
export function answerLostInTransit(err: grpc.ServiceError, headersReceived: boolean): boolean {
  return headersReceived && err.code === grpc.status.UNAVAILABLE && (err.metadata?.get(STATUS_DETAILS_TRAILER).length ?? 0) === 0;
}
