/**
 * Idempotency keys for remember and revise (the IETF httpapi Idempotency-Key draft's model): a
 * client names a write with a key of its choosing and may send it again after any failure — a
 * timeout, a 503, a connection cut after the commit. A key the tenant used within the retention
 * for the same request answers with that write's memory instead of writing again; the same key on
 * a different request is refused. The key row is written in the write's transaction, and writes
 * carrying one key are serialised, so two concurrent sends still store one memory.
 */
import { createHash } from "node:crypto";
import { AppError } from "@3ngram/errors";
import type { Queryable } from "@3ngram/db";
import stringify from "safe-stable-stringify";
import { insertIdempotencyKey, lockIdempotencyKey, selectIdempotencyKey } from "../db/idempotency.js";

/** How long a key answers for its write; the draft's examples and common practice use a day. */
export const IDEMPOTENCY_KEY_RETENTION_MS = 24 * 60 * 60_000;

export type IdempotentOperation = "remember" | "revise";

/** A write that carries a key: the key and a fingerprint of what it asks for. */
export interface KeyedWrite {
  key: string;
  operation: IdempotentOperation;
  requestHash: string;
}

/**
 * The key of a request and the fingerprint its retries must match: the operation and the parsed
 * input (defaults applied, the key itself left out), serialised with sorted keys.
 */
export function keyedWrite<T extends { idempotencyKey?: string | undefined }>(operation: IdempotentOperation, input: T): KeyedWrite | null {
  const { idempotencyKey, ...request } = input;
  if (idempotencyKey === undefined) return null;
  const requestHash = createHash("sha256")
    .update(stringify({ operation, request }) ?? "")
    .digest("hex");
  return { key: idempotencyKey, operation, requestHash };
}

/**
 * The memory an earlier send of this write produced, or null when the key is unused (or past its
 * retention). The same key on another request is idempotency_key_reused.
 */
export async function priorWrite(db: Queryable, tenantId: string, write: KeyedWrite): Promise<string | null> {
  const row = await selectIdempotencyKey(db, tenantId, write.key, IDEMPOTENCY_KEY_RETENTION_MS);
  if (row === null) return null;
  if (row.operation !== write.operation || row.requestHash !== write.requestHash) {
    throw new AppError("idempotency_key_reused", `idempotencyKey: already used for a different ${row.operation} request; use a new key for a new write`, {
      field: "idempotencyKey",
    });
  }
  return row.memoryId;
}

/**
 * Inside the write's transaction, before anything is written: waits for any concurrent send of
 * the same key to finish and returns its memory if it landed. Null means: go ahead, then call
 * recordKeyedWrite in the same transaction.
 */
export async function claimKey(db: Queryable, tenantId: string, write: KeyedWrite): Promise<string | null> {
  await lockIdempotencyKey(db, tenantId, write.key);
  return priorWrite(db, tenantId, write);
}

export function recordKeyedWrite(db: Queryable, tenantId: string, write: KeyedWrite, memoryId: string): Promise<void> {
  return insertIdempotencyKey(db, { tenantId, key: write.key, operation: write.operation, requestHash: write.requestHash, memoryId });
}
