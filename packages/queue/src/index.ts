export type * from "./queue.js";
export { FAILURE_CAUSES, PermanentJobError, UnavailableJobError, failureCause, type FailureCause } from "./errors.js";
export { createMemoryQueueBackend } from "./memory-queue.js";
export { currentTraceCarrier, withTraceCarrier, type TraceCarrier } from "./trace-context.js";
export { createRedisQueueBackend } from "./redis-queue.js";
