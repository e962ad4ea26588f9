/**
 * The embedding retry. The memory service stores a memory with `embedded: "pending"` when
 * inline embedding fails or times out and enqueues this job; here the embedding is computed
 * again and handed back to the memory service, which is the only writer.
 *
 * Idempotent: a memory that is already embedded, or that this tenant cannot see, is done.
 */
import { isAppError } from "@3ngram/errors";
import { memoryEmbeddingText, type Embedder } from "@3ngram/embeddings";
import { SCOPES } from "@3ngram/rpc";
import type { Logger } from "@3ngram/runtime";
import { EMBED_MEMORY_JOB, embedMemoryJobSchema } from "@3ngram/schema";
import { callPeer, parsePayload } from "./peer.js";
import type { ConsolidatorMemory } from "../peers.js";

export interface EmbedMemoryDeps {
  /** The two memory services this job uses (getMemories, storeEmbedding). */
  memory: Pick<ConsolidatorMemory, "memories" | "maintenance">;
  embedder: Embedder;
  log: Logger;
}

export type EmbedMemoryOutcome = "embedded" | "already_embedded" | "not_found";

/** Memories are at most 2 000 characters; this bound only guards against a runaway record. */
const MAX_CONTENT_CHARS = 8000;

export async function embedMemory(payload: unknown, deps: EmbedMemoryDeps): Promise<EmbedMemoryOutcome> {
  const parsed = parsePayload(EMBED_MEMORY_JOB, embedMemoryJobSchema, payload);
  const { tenantId } = parsed;
  // The memory service answers with lower-case ids; compare in that form.
  const memoryId = parsed.memoryId.toLowerCase();
  const { memory, embedder, log } = deps;

  const found = await callPeer("memory", () =>
    memory.memories.getMemories(
      { ids: [memoryId], maxContentChars: MAX_CONTENT_CHARS },
      { identity: { tenantId, scopes: [SCOPES.read, SCOPES.internalEmbed] } },
    ),
  );
  if (found.notFound.includes(memoryId)) {
    // Unknown, or another tenant's: the memory service answers both the same way, and neither
    // becomes embeddable by retrying.
    log.info({ memoryId }, "memory not found; nothing to embed");
    return "not_found";
  }
  const record = found.memories.find((m) => m.id === memoryId);
  if (!record) throw new Error("memory service answered without the requested memory");
  if (record.embedded === "done") {
    log.debug({ memoryId }, "memory already embedded");
    return "already_embedded";
  }

  // Must match the text the memory service embeds inline, or retried vectors would rank differently.
  const [vector] = await embedder.embed([memoryEmbeddingText(record)]);
  if (!vector || vector.length !== embedder.dimensions) {
    throw new Error(`embedder returned no ${embedder.dimensions}-dimension vector`);
  }

  try {
    const result = await callPeer("memory", () =>
      memory.maintenance.storeEmbedding({ memoryId, model: embedder.model, vector }, { identity: { tenantId, scopes: [SCOPES.internalEmbed] } }),
    );
    log.info({ memoryId, model: embedder.model, dimensions: vector.length, stored: result.stored }, "embedding stored");
    return result.stored ? "embedded" : "already_embedded";
  } catch (err) {
    if (isAppError(err) && err.reason === "not_found") {
      log.info({ memoryId }, "memory gone before its embedding was stored");
      return "not_found";
    }
    throw err;
  }
}
