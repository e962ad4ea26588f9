import { createHash } from "node:crypto";
import { withPreparedStatements, withTenant } from "@3ngram/db";
import { memoryEmbeddingText } from "@3ngram/embeddings";
import type { RememberInput, RememberOutput } from "@3ngram/schema";
import { findLiveByContentHash } from "../db/memories.js";
import type { Actor, MemoryDeps } from "./deps.js";
import { claimKey, keyedWrite, priorWrite, recordKeyedWrite } from "./idempotency.js";
import { embedMemoryInline } from "./inline-embedding.js";
import { duplicateMemory, writeMemory, writtenMemory } from "./write-memory.js";

export function contentHash(content: string): string {
  return createHash("sha256").update(content.trim()).digest("hex");
}

/**
 * Appends one memory. Never merges: the same live content in the same tenant is refused with
 * duplicate_memory and the existing id (by the insert, inside the write's transaction). Embedding
 * happens inline within a budget; when it does
 * not finish, the memory is stored anyway and a retry job is recorded with it, so nothing is
 * lost. With an idempotency key, a repeat of a write that landed answers as that write did.
 */
export async function remember(deps: MemoryDeps, actor: Actor, input: RememberInput): Promise<RememberOutput> {
  const hash = contentHash(input.content);
  const scope = { role: deps.runtimeRole, tenantId: actor.tenantId };
  const keyed = keyedWrite("remember", input);

  // A keyed write is most likely a retry: answer it from the key before paying for an embedding.
  // An unkeyed write goes straight to the write, whose insert refuses live duplicate content
  // itself; a separate read first would cost every write a transaction to spare the rare
  // duplicate an embedding.
  if (keyed) {
    const prior = await withTenant(deps.pool, { ...scope, readOnly: true }, async (db) => {
      const stored = await priorWrite(db, actor.tenantId, keyed);
      if (stored !== null) return stored;
      const existing = await findLiveByContentHash(db, actor.tenantId, hash);
      // A send of the same keyed write may have committed in between: then that is the answer.
      const landed = existing !== null ? await priorWrite(db, actor.tenantId, keyed) : null;
      if (landed !== null) return landed;
      if (existing) throw duplicateMemory(existing);
      return null;
    });
    if (prior !== null) return replay(deps, actor, prior);
  }

  const { embedding, failure } = await embedMemoryInline(deps.embedder, memoryEmbeddingText(input), deps.inlineEmbedBudgetMs);
  const written = await withTenant(deps.pool, scope, async (client) => {
    // Every write sends these same statements: parsed once per connection, not on every request.
    const db = withPreparedStatements(client);
    const prior = keyed ? await claimKey(db, actor.tenantId, keyed) : null;
    if (prior !== null) return { replayOf: prior };
    const fresh = await writeMemory(db, actor, input, { contentHash: hash, embedding, embedFailure: failure });
    if (keyed) await recordKeyedWrite(db, actor.tenantId, keyed, fresh.memory.id);
    return fresh;
  });
  if ("replayOf" in written) return replay(deps, actor, written.replayOf);
  deps.jobsRecorded();
  deps.log.info({ memoryId: written.memory.id, embedded: embedding ? "done" : "pending", facts: written.facts.length, keyed: keyed !== null }, "memory stored");
  return { ...written, embedded: embedding ? "done" : "pending" };
}

/** The answer to a repeated keyed write: the memory it stored, its facts, its embedding state now. */
async function replay(deps: MemoryDeps, actor: Actor, memoryId: string): Promise<RememberOutput> {
  const written = await withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId, readOnly: true }, (db) =>
    writtenMemory(db, actor.tenantId, memoryId),
  );
  deps.log.info({ memoryId }, "idempotent repeat answered with the stored memory");
  return written;
}
