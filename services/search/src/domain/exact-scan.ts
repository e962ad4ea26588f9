import type { NearestScan } from "./tenant-vectors.js";

/**
 * The exact cosine scan behind the in-process vector index: usearch's `exactSearch`, SIMD code in
 * a prebuilt native addon (linux x64/arm64, macOS, Windows), on the calling thread. It scans
 * 10,000 vectors of 512 dimensions in ~1 ms on this project's 2-core machine, a third of what the
 * approximate HNSW scan costs inside PGlite (docs/benchmarks.md). Loaded on demand, so a platform
 * without a prebuilt binary still runs the service, with the database's vector leg.
 */
export async function loadExactScan(): Promise<NearestScan> {
  const { default: usearch } = await import("usearch");
  return (matrix, query, dimensions, k) => {
    // One thread: the scan is a millisecond, and a pool of threads would contend with the event loop.
    const { keys } = usearch.exactSearch(matrix, query, dimensions, k, usearch.MetricKind.Cos, 1) as { keys: BigUint64Array };
    const rows = new Uint32Array(keys.length);
    for (let i = 0; i < keys.length; i++) rows[i] = Number(keys[i]);
    return rows;
  };
}
