import type { EmbedPurpose } from "./bundled-models.js";

/** Per-call options accepted by every {@link Embedder}. */
export interface EmbedOptions {
  /** Aborts the call; providers check it between batches and pass it to network requests. */
  signal?: AbortSignal;
  /**
   * What the texts are: search queries, or documents to store (the default). Models trained with
   * asymmetric markers (bge's query instruction, e5's `query:` / `passage:`) apply them from this;
   * the others ignore it.
   */
  purpose?: EmbedPurpose;
}

/**
 * Turns texts into fixed-length, unit-length vectors.
 *
 * `model` is a stable identifier persisted next to every stored vector, so that
 * vectors produced by different models are never compared with each other.
 */
export interface Embedder {
  /** Stable id stored with each vector, e.g. "use-lite-512", "hashing-512", "openai:text-embedding-3-small". */
  readonly model: string;
  /** Length of every vector returned by {@link Embedder.embed}. */
  readonly dimensions: number;
  /**
   * True when every call goes over the network to a provider: a caller should not hold a scarce
   * resource (a database connection) while it waits. Absent: the model runs in this process.
   */
  readonly remote?: boolean;
  /** Returns one unit-length vector per input text, in input order. */
  embed(texts: readonly string[], options?: EmbedOptions): Promise<number[][]>;
  /** Releases resources held by the embedder, if any. */
  close?(): Promise<void>;
}
