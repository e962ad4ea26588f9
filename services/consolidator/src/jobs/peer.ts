/**
 * How a job calls the memory and search peers (../peers.ts): refusals that the same call would
 * meet on every retry become PermanentJobError (straight to the dead letters); everything else —
 * the peer down, a deadline, an internal error — propagates so the queue retries with backoff.
 */
import { isAppError } from "@3ngram/errors";
import { PermanentJobError, type RetryPolicy } from "@3ngram/queue";
import { z } from "zod";

const PERMANENT_REASONS = new Set(["invalid_input", "unauthenticated", "insufficient_scope"]);

export async function callPeer<T>(peer: string, rpc: () => Promise<T>): Promise<T> {
  try {
    return await rpc();
  } catch (err) {
    if (isAppError(err) && PERMANENT_REASONS.has(err.reason)) {
      throw new PermanentJobError(`${peer} service refused: ${err.reason}`, { cause: err });
    }
    throw err;
  }
}

/** Validates a job payload; a malformed one can never succeed, so it is permanent. */
export function parsePayload<S extends z.ZodType>(job: string, schema: S, payload: unknown): z.output<S> {
  const parsed = schema.safeParse(payload);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join(".") : "payload";
  throw new PermanentJobError(`invalid ${job} payload: ${where}: ${issue?.message ?? "invalid"}`);
}

/** Per-tenant jobs carry the tenant (the backfill adds where it resumes). */
export const tenantJobSchema = z.strictObject({ tenantId: z.uuid() });
/** Per-tenant work: more tries, since it is the part that does the work (5 s doubling to a minute, ~4 min). */
export const TENANT_JOB_RETRY_POLICY: RetryPolicy = { attempts: 8, backoffMs: 5_000, maxBackoffMs: 60_000 };
