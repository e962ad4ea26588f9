/**
 * Every reason code and how each transport expresses it. Adding a reason means adding one row
 * here; the gRPC, HTTP and MCP edges all read this table, so they cannot drift apart.
 */

/** gRPC status codes we use (numeric values from the gRPC spec; kept here so this package has no deps). */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcCode = (typeof GrpcCode)[keyof typeof GrpcCode];

interface ReasonMapping {
  grpc: GrpcCode;
  http: number;
  /** Whether the caller caused it (logged at warn) or we did (logged at error). */
  callerFault: boolean;
}

export const REASONS = {
  invalid_input: { grpc: GrpcCode.INVALID_ARGUMENT, http: 400, callerFault: true },
  not_found: { grpc: GrpcCode.NOT_FOUND, http: 404, callerFault: true },
  duplicate_memory: { grpc: GrpcCode.ALREADY_EXISTS, http: 409, callerFault: true },
  conflict: { grpc: GrpcCode.FAILED_PRECONDITION, http: 409, callerFault: true },
  invalid_transition: { grpc: GrpcCode.FAILED_PRECONDITION, http: 409, callerFault: true },
  /** An idempotency key sent again with a different request (422, as the Idempotency-Key draft says). */
  idempotency_key_reused: { grpc: GrpcCode.FAILED_PRECONDITION, http: 422, callerFault: true },
  unauthenticated: { grpc: GrpcCode.UNAUTHENTICATED, http: 401, callerFault: true },
  insufficient_scope: { grpc: GrpcCode.PERMISSION_DENIED, http: 403, callerFault: true },
  rate_limited: { grpc: GrpcCode.RESOURCE_EXHAUSTED, http: 429, callerFault: true },
  unavailable: { grpc: GrpcCode.UNAVAILABLE, http: 503, callerFault: false },
  internal_error: { grpc: GrpcCode.INTERNAL, http: 500, callerFault: false },
} as const satisfies Record<string, ReasonMapping>;

export type Reason = keyof typeof REASONS;
export const REASON_CODES = Object.keys(REASONS) as Reason[];

export function isReason(value: unknown): value is Reason {
  return typeof value === "string" && Object.hasOwn(REASONS, value);
}

export function reasonMapping(reason: Reason): ReasonMapping {
  return REASONS[reason];
}

/**
 * Reverse mapping for a gRPC status that arrived without a reason in its trailers
 * (e.g. a transport failure raised by grpc-js itself).
 */
export function reasonForGrpcCode(code: number): Reason {
  switch (code) {
    case GrpcCode.INVALID_ARGUMENT:
      return "invalid_input";
    case GrpcCode.NOT_FOUND:
      return "not_found";
    case GrpcCode.ALREADY_EXISTS:
      return "duplicate_memory";
    case GrpcCode.FAILED_PRECONDITION:
    case GrpcCode.ABORTED:
      return "conflict";
    case GrpcCode.UNAUTHENTICATED:
      return "unauthenticated";
    case GrpcCode.PERMISSION_DENIED:
      return "insufficient_scope";
    case GrpcCode.RESOURCE_EXHAUSTED:
      // Without our reason trailer this is grpc-js refusing an oversized message, not a rate limit.
      return "invalid_input";
    case GrpcCode.UNAVAILABLE:
    case GrpcCode.DEADLINE_EXCEEDED:
    case GrpcCode.CANCELLED:
      return "unavailable";
    default:
      return "internal_error";
  }
}
