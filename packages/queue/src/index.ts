export type * from "./queue.js";
export { FAILURE_CAUSES, PermanentJobError, UnavailableJobError, failureCause, type FailureCause } from "./errors.js";
export { MAX_JOB_ID_LENGTH } from "./options.js";
export { createMemoryQueueBackend } from "./memory-queue.js";
export { currentTraceCarrier, withTraceCarrier, type TraceCarrier } from "./trace-context.js";
export { createRedisQueueBackend, type RedisQueueBackendOptions } from "./redis-queue.js";
