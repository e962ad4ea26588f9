import type { Pool } from "@3ngram/db";
import type { Embedder } from "@3ngram/embeddings";
import type { DeadLetterCounts, QueueCounts } from "@3ngram/queue";
import type { Logger } from "@3ngram/runtime";
import type { ActorKind } from "../db/memories.js";

/** Everything the memory domain needs, passed in explicitly (the domain never reads the environment). */
export interface MemoryDeps {
  pool: Pool;
  /** Database role request work runs as. */
  runtimeRole: string;
  /** Null when no embedder is configured: every memory is stored pending and embedded later. */
  embedder: Embedder | null;
  /** A committed write recorded outbox jobs: the relay may move them now instead of at its next tick. */
  jobsRecorded: () => void;
  /** Reads a queue's depth and dead-letter count (describe_environment); absent when the backend offers none. */
  queueCounts?: (queue: string) => Promise<QueueCounts>;
  /** Reads a queue's dead letters by cause; absent when the backend offers none. */
  deadLetters?: (queue: string) => Promise<DeadLetterCounts>;
  /** How long remember may wait for an inline embedding before storing the memory as pending. */
  inlineEmbedBudgetMs: number;
  log: Logger;
}

/** Who is acting, as far as the domain cares. */
export interface Actor {
  tenantId: string;
  userId: string | undefined;
  /** operator: the memory service's command line (cli.ts), run by whoever holds the database credentials. */
  kind: ActorKind;
}
