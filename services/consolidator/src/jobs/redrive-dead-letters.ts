/**
 * The periodic re-drive of dead letters that failed only because something was away: a job whose
 * every attempt met a restarting peer or database is put back with a fresh set of attempts, so an
 * outage longer than a job's retries (minutes) delays work instead of losing it. Jobs that failed
 * for any other reason stay dead-lettered for an operator (`cli.js redrive`).
 */
import type { JobSchedule, QueueBackend, RetryPolicy } from "@3ngram/queue";
import type { Logger } from "@3ngram/runtime";
import { CONSOLIDATOR_QUEUES } from "@3ngram/schema";
import { z } from "zod";
import { parsePayload } from "./peer.js";

export const REDRIVE_DEAD_LETTERS_JOB = "redrive-dead-letters";
export const REDRIVE_EVERY_MS = 10 * 60_000;
const REDRIVE_RETRY_POLICY: RetryPolicy = { attempts: 3, backoffMs: 10_000 };

export const REDRIVE_SCHEDULE: JobSchedule = {
  id: REDRIVE_DEAD_LETTERS_JOB,
  name: REDRIVE_DEAD_LETTERS_JOB,
  everyMs: REDRIVE_EVERY_MS,
  retry: REDRIVE_RETRY_POLICY,
};

export interface RedriveDeps {
  deadLetters: Pick<QueueBackend, "redrive">;
  log: Logger;
}

const payloadSchema = z.strictObject({});

export async function redriveUnavailableDeadLetters(payload: unknown, deps: RedriveDeps): Promise<"redriven" | "nothing_to_redrive"> {
  parsePayload(REDRIVE_DEAD_LETTERS_JOB, payloadSchema, payload ?? {});
  let total = 0;
  for (const queue of CONSOLIDATOR_QUEUES) {
    const moved = await deps.deadLetters.redrive(queue, { cause: "unavailable" });
    if (moved > 0) deps.log.info({ queue, moved }, "dead letters re-driven (failed as unavailable)");
    total += moved;
  }
  return total > 0 ? "redriven" : "nothing_to_redrive";
}
