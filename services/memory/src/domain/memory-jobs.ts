/**
 * The background work a written memory needs, recorded in the write's transaction (the outbox,
 * migration 0006) instead of being queued after it: a queue that is down at that moment then
 * delays the work but cannot lose it.
 */
import type { Queryable } from "@3ngram/db";
import { currentTraceCarrier, type RetryPolicy } from "@3ngram/queue";
import { EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB, EMBED_RETRY_POLICY, EXTRACTION_QUEUE, EXTRACT_FACTS_JOB, EXTRACT_RETRY_POLICY } from "@3ngram/schema";
import { insertOutboxJobs, type OutboxJob } from "../db/outbox.js";

/** The retry policy each job is queued with, by job name. */
export const JOB_RETRY_POLICIES: Readonly<Record<string, RetryPolicy>> = {
  [EMBED_MEMORY_JOB]: EMBED_RETRY_POLICY,
  [EXTRACT_FACTS_JOB]: EXTRACT_RETRY_POLICY,
};

/** What a new memory still needs done: an embedding when none was stored inline, and fact extraction. */
interface MemoryNeeds {
  embedding: boolean;
  /** False only when its facts came with it (a 3ngram archive carries the facts its source kept). */
  facts: boolean;
}

function memoryJobs(tenantId: string, memoryId: string, needs: MemoryNeeds): OutboxJob[] {
  const payload = { tenantId, memoryId };
  const carrier = currentTraceCarrier();
  const traced = carrier === undefined ? {} : { traceContext: carrier };
  const jobs: OutboxJob[] = [];
  if (needs.facts) jobs.push({ tenantId, queue: EXTRACTION_QUEUE, jobName: EXTRACT_FACTS_JOB, payload, jobId: `extract-${memoryId}`, ...traced });
  if (needs.embedding) jobs.push({ tenantId, queue: EMBEDDINGS_QUEUE, jobName: EMBED_MEMORY_JOB, payload, jobId: `embed-${memoryId}`, ...traced });
  return jobs;
}

/** Records a new memory's jobs inside the caller's transaction. */
export function recordMemoryJobs(db: Queryable, tenantId: string, memoryId: string, needs: MemoryNeeds): Promise<void> {
  return insertOutboxJobs(db, memoryJobs(tenantId, memoryId, needs));
}
