export { AppError, inputProblems, invalidInput, isAppError, issuePath, toAppError, type InputProblem, type ValidationIssue } from "./app-error.js";
export { isRetryableUpstreamStatus } from "./upstream.js";
export { GrpcCode, REASONS, REASON_CODES, isReason, reasonMapping, reasonForGrpcCode, type Reason } from "./reasons.js";
