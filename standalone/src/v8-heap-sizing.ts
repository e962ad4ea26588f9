import { setFlagsFromString } from "node:v8";

/**
 * How far V8 lets the old generation grow past what survived its last full collection before it
 * runs the next one, in percent. Left to itself V8 picks a factor of up to 4 from how fast the
 * program allocates, so during a bulk load the old space held ~98 MB for ~60 MB of live objects
 * (the four services' objects barely grow with the store: heap snapshots at 2,000 and 3,000
 * memories differ by under 1 MB outside compiled code; docs/benchmarks.md, 2026-12-07). V8 reads
 * this flag each time it sets the next limit, so it can be set while the process runs.
 */
const HEAP_GROWING_PERCENT = 25;

/**
 * The young generation's semi-space cap in MB (V8's default is 16: two semi-spaces, 32 MB, all of
 * it resident once a burst of requests has grown it). V8 sizes the young generation only when the
 * heap is set up, so this has to be on node's command line (`make run`, the bench, and the exec in
 * place in malloc-arenas.ts); unlike the growing factor it cannot be set from inside the process.
 */
export const STANDALONE_MAX_SEMI_SPACE_MB = "4";

/** Makes V8 collect the old generation sooner instead of letting its garbage stay resident. */
export function limitOldGenerationGrowth(percent: number = HEAP_GROWING_PERCENT): void {
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}
