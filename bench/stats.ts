/**
 * What every benchmark shares: a seeded PRNG (so each run generates the same corpus and the same
 * queries), percentiles over latency samples, and the command-line flags more than one bench reads.
 */
import { bundledModel, DEFAULT_BUNDLED_MODEL } from "@3ngram/embeddings";

/** A small seeded PRNG (mulberry32): the same seed gives the same sequence on every machine. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)]!;
}

export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
}

/** The value after `flag` on a bench's command line (`--sizes 1000,10000`), or undefined. */
export function flagValue(argv: readonly string[], flag: string): string | undefined {
  const i = argv.indexOf(flag);
  return i >= 0 ? argv[i + 1] : undefined;
}

/** The dimensions an HNSW index exists for (migrations 0001: 512, 0013: 384). */
const INDEXED_DIMENSIONS = [384, 512];

/**
 * `--dimensions`: how long the hashing embedder's vectors are. The default is the dimension of the
 * model a server runs by default, so PostgreSQL stores and indexes what a default deployment does
 * (a 512-dimension vector is stored out of line, in TOAST; one of 384 in the row).
 */
export function hashingDimensions(argv: readonly string[]): number {
  const dimensions = Number(flagValue(argv, "--dimensions") ?? bundledModel(DEFAULT_BUNDLED_MODEL).dimensions);
  if (!INDEXED_DIMENSIONS.includes(dimensions)) throw new Error(`--dimensions is ${INDEXED_DIMENSIONS.join(" or ")} (the dimensions the migrations index)`);
  return dimensions;
}

/** Nearest-rank percentiles; NaN for no samples. */
export function percentiles(samples: readonly number[]): Percentiles {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99) };
}
