import type { EmbedOptions, Embedder } from "./embedder.js";

/** Default vector length for the hashing embedder (matches the bundled local model). */
const DEFAULT_HASHING_DIMENSIONS = 512;
/** pgvector's upper limit for the `vector` type. */
export const MAX_VECTOR_DIMENSIONS = 16000;

export interface HashingEmbedderOptions {
  /** Number of hash buckets, i.e. vector length. Default 512. */
  dimensions?: number;
}

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

// Distinct feature families start from distinct states so that, say, the word
// "cat" and the 3-gram "cat" do not always land in the same bucket.
const WORD_FEATURE = 0x57; // 'W'
const TRIGRAM_FEATURE = 0x33; // '3'
const FOURGRAM_FEATURE = 0x34; // '4'

const WORD_WEIGHT = 1;
const NGRAM_WEIGHT = 0.5;

const WORD_PATTERN = /[\p{L}\p{N}_]+/gu;

/** 32-bit FNV-1a over UTF-16 code units of `text[start, end)`, seeded with a feature tag. */
function fnv1a(text: string, start: number, end: number, tag: number): number {
  let hash = Math.imul(FNV_OFFSET_BASIS ^ tag, FNV_PRIME);
  for (let i = start; i < end; i++) {
    hash = Math.imul(hash ^ text.charCodeAt(i), FNV_PRIME);
  }
  return hash >>> 0;
}

/** Murmur3 finaliser: spreads FNV's weak low/high bits before bucket and sign selection. */
function mix(hash: number): number {
  let h = hash;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * A fast, deterministic, dependency-free embedder based on the hashing trick.
 *
 * Features are lower-cased word tokens plus character 3- and 4-grams of the
 * space-joined tokens; each feature is hashed to a bucket and a sign, summed,
 * and the result L2-normalised. Texts with no tokens map to a fixed unit vector.
 *
 * It captures lexical overlap only (no semantics), which makes it suitable for
 * tests and for bulk benchmark loads where model inference would dominate.
 */
export class HashingEmbedder implements Embedder {
  readonly model: string;
  readonly dimensions: number;

  constructor(options: HashingEmbedderOptions = {}) {
    const dimensions = options.dimensions ?? DEFAULT_HASHING_DIMENSIONS;
    if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_VECTOR_DIMENSIONS) {
      throw new RangeError(`HashingEmbedder: dimensions must be an integer between 1 and ${MAX_VECTOR_DIMENSIONS}, got ${dimensions}`);
    }
    this.dimensions = dimensions;
    this.model = `hashing-${dimensions}`;
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<number[][]> {
    options.signal?.throwIfAborted();
    return texts.map((text) => this.embedOne(text));
  }

  /** Synchronous single-text variant of {@link HashingEmbedder.embed}. */
  embedOne(text: string): number[] {
    const vector = new Float64Array(this.dimensions);
    const words = text.normalize("NFKC").toLowerCase().match(WORD_PATTERN);

    if (words === null) {
      const fixed = new Array<number>(this.dimensions).fill(0);
      fixed[0] = 1;
      return fixed;
    }

    for (const word of words) {
      this.add(vector, fnv1a(word, 0, word.length, WORD_FEATURE), WORD_WEIGHT);
    }

    // Padding with spaces lets n-grams mark word starts and ends.
    const joined = ` ${words.join(" ")} `;
    for (let i = 0; i + 3 <= joined.length; i++) {
      this.add(vector, fnv1a(joined, i, i + 3, TRIGRAM_FEATURE), NGRAM_WEIGHT);
      if (i + 4 <= joined.length) {
        this.add(vector, fnv1a(joined, i, i + 4, FOURGRAM_FEATURE), NGRAM_WEIGHT);
      }
    }

    let sumSquares = 0;
    for (const value of vector) sumSquares += value * value;
    if (sumSquares === 0) {
      // Every feature cancelled out (astronomically unlikely); stay a unit vector.
      const fixed = new Array<number>(this.dimensions).fill(0);
      fixed[0] = 1;
      return fixed;
    }
    const inverse = 1 / Math.sqrt(sumSquares);
    return Array.from(vector, (value) => value * inverse);
  }

  private add(vector: Float64Array, hash: number, weight: number): void {
    const mixed = mix(hash);
    const bucket = mixed % this.dimensions;
    // The sign comes from a second round so it stays independent of the bucket
    // even when `dimensions` is not a power of two.
    const signed = (mix(mixed ^ 0x5bd1e995) & 1) === 0 ? weight : -weight;
    vector[bucket] = (vector[bucket] ?? 0) + signed;
  }
}
