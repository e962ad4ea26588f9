/**
 * Standalone benchmark: the workload of bench/workload.ts (N memories, one `remember` each, then
 * rare-word searches first time and again with the query embedding cached, paraphrase questions,
 * chronological listings) against the real `make run` server through MCP with the bundled model.
 *
 *   npm run bench:standalone                          # N = 1,000 and 10,000, 200 searches
 *   npm run bench:standalone -- --sizes 2000 --searches 50
 *   npm run bench:standalone -- --quick               # 500 memories, 50 searches, no idle memory reading
 *   npm run bench:standalone -- --idle-rss 0          # skip the minute idle before the second memory reading
 *   npm run bench:standalone -- --no-breakdown        # skip the per-stage breakdown (bench/breakdown.ts)
 *   npm run bench:standalone -- --keep-data           # leave each size's data directory (printed) for EXPLAIN work
 *   npm run bench:standalone -- --sizes 10000 --reuse-data DIR   # searches only, on a directory kept at that size
 *
 * Environment variables given to the bench are passed on to the server (EMBEDDINGS_PROVIDER=hashing
 * measures without the model, MALLOC_ARENA_MAX=0 without make run's malloc arena cap, NODE_OPTIONS
 * with other V8 settings).
 */
import { rmSync } from "node:fs";
import { measureBreakdown, printBreakdown, type Breakdown } from "./breakdown.js";
import { printResults } from "./report.js";
import { startStandaloneTarget } from "./standalone-target.js";
import { flagValue, prng } from "./stats.js";
import { generateCorpus, parseBenchArgs, runWorkload, type Result } from "./workload.js";

export async function main(argv: readonly string[]): Promise<number> {
  const { sizes, searches, idleSeconds } = parseBenchArgs(argv);
  const results: Result[] = [];
  const breakdowns: Breakdown[] = [];
  const reuse = flagValue(argv, "--reuse-data");
  if (reuse !== undefined && sizes.length !== 1) throw new Error("--reuse-data takes one size: the N its directory was kept at");
  for (const n of sizes) {
    const env = passThroughEnv();
    const target = await startStandaloneTarget(env, reuse === undefined ? { keepDataDir: true } : { dataDir: reuse, corpus: generateCorpus(n).memories });
    try {
      try {
        results.push(
          await runWorkload(target, { n, searches, idleSeconds, loaded: reuse !== undefined, progress: (line) => process.stderr.write(`${line}\n`) }),
        );
      } finally {
        await target.close();
      }
      if (!argv.includes("--no-breakdown")) {
        process.stderr.write(`per-stage breakdown at ${n}…\n`);
        breakdowns.push(await measureBreakdown(target.dataDir, breakdownQueries(n, searches), env));
      }
    } finally {
      if (reuse !== undefined) process.stderr.write(`searched the kept data directory: ${reuse}\n`);
      else if (argv.includes("--keep-data")) process.stderr.write(`kept the data directory of N = ${n}: ${target.dataDir}\n`);
      else rmSync(target.dataDir, { recursive: true, force: true });
    }
  }
  printResults(results, searches);
  breakdowns.forEach((b, i) => {
    const r = results[i]!;
    printBreakdown(r.n, b, r.searchCached.p50, r.searchFirst.p50, r.chronological?.p50);
  });
  return 0;
}

/** Rare-word queries for the breakdown: other memories than the MCP run searched (their embeddings are not cached anywhere). */
function breakdownQueries(n: number, count: number): string[] {
  const { memories } = generateCorpus(n);
  const random = prng(11);
  return Array.from({ length: count }, () => memories[Math.floor(random() * memories.length)]!.rare);
}

/** The 3ngram settings in the bench's environment, so a variant can be measured without editing code. */
export function passThroughEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && (/^(EMBED|EMBEDDINGS|SEARCH|QUERY|STANDALONE|DATABASE|MALLOC)_/.test(key) || key === "NODE_OPTIONS")) env[key] = value;
  }
  return env;
}
