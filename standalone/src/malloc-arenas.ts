import { STANDALONE_MAX_SEMI_SPACE_MB } from "./v8-heap-sizing.js";

/**
 * glibc's malloc gives each thread that contends for the heap an arena of its own (up to eight per
 * core) and keeps those arenas resident. Standalone runs PGlite's WebAssembly compilation threads,
 * V8's and libuv's threads and the model's worker in one process, and their arenas held 130 MB and
 * more that two arenas do without (docs/benchmarks.md, docs/adr/0036). glibc reads the cap only
 * when the process starts, so it has to be in the environment before `node` runs.
 */
export const STANDALONE_MALLOC_ARENA_MAX = "2";

/**
 * glibc serves a block of 128 kB or more with a mapping of its own, returned to the system when the
 * block is freed, but it raises that threshold to the size of any such block freed (up to 32 MB):
 * after ONNX Runtime and V8 have freed their large start-up and compilation buffers, blocks of that
 * size come from the arenas instead, whose pages stay resident once freed. Setting the threshold
 * explicitly turns the raising off; at 10,000 memories it kept ~50 MB less resident in the arenas
 * (docs/benchmarks.md, 2026-12-07, issue 32).
 */
export const STANDALONE_MALLOC_MMAP_THRESHOLD = "131072";

type Execve = (file: string, args: readonly string[], env: NodeJS.ProcessEnv) => never;

export interface ArenaCapCheck {
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
  /** process.execve where this Node.js has it (22.15+, 23.11+), else undefined. */
  execve: Execve | undefined;
  /** Whether the C library is glibc (only glibc reads MALLOC_ARENA_MAX). */
  isGlibc: () => boolean;
}

/**
 * Whether this process should replace itself with one that has the cap: only on glibc, only when
 * nobody chose a value (an explicit MALLOC_ARENA_MAX, even empty or 0, or a GLIBC_TUNABLES arena
 * setting is the user's), and only where Node.js can exec in place. The new image has the variable
 * set, so it never asks again.
 */
export function shouldReexecForArenaCap(check: ArenaCapCheck): boolean {
  if (check.platform !== "linux" || !check.execve) return false;
  if (check.env.MALLOC_ARENA_MAX !== undefined) return false;
  if (check.env.GLIBC_TUNABLES?.includes("glibc.malloc.arena_max")) return false;
  return check.isGlibc();
}

export function runtimeIsGlibc(): boolean {
  const header = (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header;
  return typeof header?.glibcVersionRuntime === "string";
}

/**
 * Replaces the process, keeping its pid, arguments, stdio and the rest of its environment, with
 * the same command plus MALLOC_ARENA_MAX (and MALLOC_MMAP_THRESHOLD_ and the young generation's cap,
 * unless the caller set them). Being the same process (not a parent with a child), the
 * server receives signals directly and its exit code is the one its caller sees. Returns only when
 * nothing was done (see shouldReexecForArenaCap) or exec failed, and then the server starts as is.
 */
export function reexecWithArenaCap(): void {
  const execve = (process as { execve?: Execve }).execve;
  const check: ArenaCapCheck = { platform: process.platform, env: process.env, execve, isGlibc: runtimeIsGlibc };
  if (!shouldReexecForArenaCap(check) || !execve) return;
  try {
    // The young generation's cap, like the malloc settings, is only read when a process starts.
    const semiSpace = process.execArgv.some((arg) => arg.startsWith("--max-semi-space-size")) ? [] : [`--max-semi-space-size=${STANDALONE_MAX_SEMI_SPACE_MB}`];
    execve.call(process, process.execPath, [process.execPath, ...semiSpace, ...process.execArgv, ...process.argv.slice(1)], {
      MALLOC_MMAP_THRESHOLD_: STANDALONE_MALLOC_MMAP_THRESHOLD,
      ...process.env,
      MALLOC_ARENA_MAX: STANDALONE_MALLOC_ARENA_MAX,
    });
  } catch {
    // Starting without the cap costs memory, not correctness.
  }
}
