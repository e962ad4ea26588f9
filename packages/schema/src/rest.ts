import { z } from "zod";
import { outputObject } from "./open-object.js";

/**
 * Every REST error answer: the reason code first, then what the caller can act on. `detail` and
 * `field` name the problem without echoing content; our own failures carry only the request id.
 */
export const restErrorOutputSchema = outputObject({
  error: z.string(),
  detail: z.string().optional(),
  /** The path of the offending input field or query parameter. */
  field: z.string().optional(),
  /** Ids the caller needs to recover (e.g. the current head after a conflict). */
  ids: z.record(z.string(), z.string()).optional(),
  request_id: z.string(),
});
export type RestErrorBody = z.infer<typeof restErrorOutputSchema>;

/** GET /health: the process is up (no I/O). */
export const healthOutputSchema = outputObject({ status: z.literal("ok") });

/** GET /ready: each gRPC peer's health status; 503 with notServing when any is not SERVING. */
export const readinessOutputSchema = outputObject({
  status: z.enum(["ready", "not_ready"]),
  notServing: z.array(z.string()).optional(),
  peers: z.record(z.string(), z.string()),
});
export type ReadinessOutput = z.infer<typeof readinessOutputSchema>;
