/**
 * Errors on the wire as the standard gRPC rich error model: a serialized `google.rpc.Status` in
 * the `grpc-status-details-bin` trailer, its details holding an ErrorInfo (our reason code, the
 * service's domain, the field and ids), a BadRequest for INVALID_ARGUMENT and a RetryInfo when a
 * retry may succeed. Any gRPC client that knows google.rpc.Status reads them without our code
 * (docs/grpc.md, ADR-0030).
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { anyIs, anyPack, anyUnpack, durationFromMs, durationMs, type Any } from "@bufbuild/protobuf/wkt";
import { BadRequestSchema, ErrorInfoSchema, RetryInfoSchema } from "@3ngram/proto/google/rpc/error_details";
import { StatusSchema } from "@3ngram/proto/google/rpc/status";
import { GrpcCode, isReason, reasonMapping, type AppError, type Reason } from "@3ngram/errors";

/** The trailer gRPC reserves for a serialized google.rpc.Status. */
export const STATUS_DETAILS_TRAILER = "grpc-status-details-bin";

/** Every ErrorInfo domain we send starts with this; the rest names the service ("3ngram.memory"). */
const DOMAIN_PREFIX = "3ngram.";

/**
 * The wait a RetryInfo names when the error itself states none: the same one second REST
 * advertises as Retry-After for these reasons, and about how long a channel takes to reconnect.
 */
const DEFAULT_RETRY_DELAY_MS = 1_000;

/** ErrorInfo metadata key for the field path; ids travel as "<name>Id" (lowerCamelCase, as AIP-193 asks). */
const FIELD_KEY = "field";
const ID_KEY = /^([a-z][a-zA-Z0-9]*)Id$/;

export function errorDomain(service: string): string {
  return `${DOMAIN_PREFIX}${service}`;
}

/** Reasons a later retry of the same call may cure; they carry a RetryInfo. */
export function isRetryableReason(reason: Reason): boolean {
  return reason === "unavailable" || reason === "rate_limited";
}

/** The serialized google.rpc.Status for an error a server of `domain` answers with. */
export function encodeStatusDetails(error: AppError, domain: string): Uint8Array {
  const { field, ids, retryAfterMs } = error.details;
  const metadata: Record<string, string> = {};
  if (field) metadata[FIELD_KEY] = field;
  for (const [name, id] of Object.entries(ids ?? {})) metadata[`${name}Id`] = id;
  const details: Any[] = [anyPack(ErrorInfoSchema, create(ErrorInfoSchema, { reason: error.reason, domain, metadata }))];
  const code = reasonMapping(error.reason).grpc;
  if (code === GrpcCode.INVALID_ARGUMENT && field) {
    // Messages read "<field>: <problem>"; the violation names the field already, so it says only the problem.
    const description = error.message.startsWith(`${field}: `) ? error.message.slice(field.length + 2) : error.message;
    details.push(anyPack(BadRequestSchema, create(BadRequestSchema, { fieldViolations: [{ field, description }] })));
  }
  if (isRetryableReason(error.reason)) {
    details.push(anyPack(RetryInfoSchema, create(RetryInfoSchema, { retryDelay: durationFromMs(retryAfterMs ?? DEFAULT_RETRY_DELAY_MS) })));
  }
  return toBinary(StatusSchema, create(StatusSchema, { code, message: error.message, details }));
}

/** What a 3ngram server said about a failed call, read back from its Status. */
export interface DecodedStatus {
  reason: Reason;
  message: string;
  field?: string;
  ids?: Record<string, string>;
  retryAfterMs?: number;
}

/**
 * Reads a Status trailer back. Answers undefined for anything that is not one of ours: bytes that
 * do not parse, a Status whose code disagrees with the call's, or an ErrorInfo from another
 * domain or with a reason we do not know. The caller then falls back to the status code alone.
 */
export function decodeStatusDetails(bytes: Uint8Array, code: number): DecodedStatus | undefined {
  try {
    const status = fromBinary(StatusSchema, bytes);
    if (status.code !== code) return undefined;
    const infoAny = status.details.find((d) => anyIs(d, ErrorInfoSchema));
    const info = infoAny && anyUnpack(infoAny, ErrorInfoSchema);
    if (!info || !info.domain.startsWith(DOMAIN_PREFIX) || !isReason(info.reason)) return undefined;
    const ids: Record<string, string> = {};
    for (const [key, value] of Object.entries(info.metadata)) {
      const name = ID_KEY.exec(key)?.[1];
      if (name) ids[name] = value;
    }
    const retryAny = status.details.find((d) => anyIs(d, RetryInfoSchema));
    const retry = retryAny && anyUnpack(retryAny, RetryInfoSchema);
    const violationAny = status.details.find((d) => anyIs(d, BadRequestSchema));
    const field = info.metadata[FIELD_KEY] ?? (violationAny && anyUnpack(violationAny, BadRequestSchema))?.fieldViolations[0]?.field;
    return {
      reason: info.reason,
      message: status.message,
      ...(field ? { field } : {}),
      ...(Object.keys(ids).length > 0 ? { ids } : {}),
      ...(retry?.retryDelay ? { retryAfterMs: durationMs(retry.retryDelay) } : {}),
    };
  } catch {
    // A garbled trailer (or an Any whose bytes do not parse) is not worth failing the caller over.
    return undefined;
  }
}
