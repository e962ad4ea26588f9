import { createRequire } from "node:module";
import { runtimeIsGlibc } from "./malloc-arenas.js";
import { startReclaimOnGrowth, type GrowthBudget, type ReclaimOnGrowth } from "./reclaim-on-growth.js";

/**
 * glibc gives pages back to the system only from the top of an arena; a freed block below a live
 * one keeps its pages resident until malloc reuses them. Standalone's threads (the event loop's
 * socket buffers, PGlite's exchanges, ONNX Runtime in the model's worker) free many blocks among
 * live ones, so after a 10,000-memory load the main arena held 68 MB resident, of which
 * `malloc_trim(0)` returned 45 MB and the second arena another 16 MB: 456 → 393 MB for the
 * whole process (docs/benchmarks.md, issue 32; docs/adr/0047). Node.js has no binding for it, so
 * it is called through koffi, a foreign-function library that ships prebuilt for each platform (no
 * compiler at install). The call runs on a libuv pool thread, not the event loop: it walks every
 * arena under that arena's lock, 1–18 ms at this size.
 */

/** A trim once resident memory has grown 4 MB over its lowest since the last trim, at most once a second. */
const MALLOC_TRIM_BUDGET: GrowthBudget = { budgetBytes: 4 * 1024 * 1024, checkMs: 1_000, minIntervalMs: 1_000 };

/** glibc's `malloc_trim(0)` run off the event loop; resolves once it has returned. */
export type MallocTrim = () => Promise<void>;

interface KoffiTrim {
  async(pad: number, done: (err: unknown) => void): void;
}

/**
 * glibc's `malloc_trim`, or null where there is none to call: another C library (musl, macOS,
 * Windows), or koffi not loading on this platform. Either way the server runs, holding more memory.
 */
export function loadMallocTrim(): MallocTrim | null {
  if (!runtimeIsGlibc()) return null;
  let trim: KoffiTrim;
  try {
    const koffi = createRequire(import.meta.url)("koffi") as typeof import("koffi");
    trim = koffi.load("libc.so.6").func("int malloc_trim(size_t pad)") as KoffiTrim;
  } catch {
    return null;
  }
  return () =>
    new Promise<void>((resolve, reject) => {
      trim.async(0, (err) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve()));
    });
}

/**
 * Trims glibc's arenas whenever the process's resident memory has grown past the budget; null
 * where there is no `malloc_trim` (loadMallocTrim). Resident memory, not the arenas' own figures,
 * is what is read: glibc reports those only by walking the arenas.
 */
export function startMallocTrim(onError?: (err: unknown) => void): ReclaimOnGrowth | null {
  const trim = loadMallocTrim();
  if (!trim) return null;
  return startReclaimOnGrowth({
    ...MALLOC_TRIM_BUDGET,
    size: () => process.memoryUsage.rss(),
    reclaim: async () => {
      await trim();
      return process.memoryUsage.rss();
    },
    onError,
  });
}
