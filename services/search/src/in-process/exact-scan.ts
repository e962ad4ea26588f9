import type { NearestScan } from "./tenant-vectors.js";

/**
 * The scan behind the in-process vector index: usearch's `exactSearch` (every vector compared, no
 * graph), SIMD code in a prebuilt native addon (linux x64/arm64, macOS, Windows), on the calling
 * thread, over int8 vectors (tenant-vectors.ts, quantize). It scans 10,000 vectors of 512
 * dimensions in ~0.5 ms on this project's 2-core machine, where the approximate HNSW scan inside
 * PGlite takes 3.4 ms (docs/benchmarks.md). Loaded on demand, so a platform without a prebuilt
 * binary still runs the service, with the database's vector leg.
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
