/**
 * Peers benchmark: the standalone workload (bench/workload.ts) against the official reference
 * memory server (@modelcontextprotocol/server-memory over stdio, a JSONL file) and against 3ngram
 * standalone through MCP, in the same run and size by size, every figure with its ratio to the
 * reference. How the workload maps onto the reference's tools: bench/reference-target.ts.
 *
 *   npm run bench:peers                       # N = 1,000 and 10,000, 200 searches
 *   npm run bench:peers -- --sizes 2000 --searches 50
 *   npm run bench:peers -- --quick
 */
import { startReferenceTarget } from "./reference-target.js";
import { printComparison, printResults } from "./report.js";
import { passThroughEnv } from "./standalone.js";
import { startStandaloneTarget } from "./standalone-target.js";
import { parseBenchArgs, runWorkload, type Result, type Target } from "./workload.js";

async function measure(target: Target, n: number, searches: number, idleSeconds: number): Promise<Result> {
  try {
    return await runWorkload(target, { n, searches, idleSeconds, progress: (line) => process.stderr.write(`${line}\n`) });
  } finally {
    await target.close();
  }
}

export async function main(argv: readonly string[]): Promise<number> {
  const { sizes, searches, idleSeconds } = parseBenchArgs(argv);
  const all: Result[] = [];
  const pairs: Array<[Result, Result]> = [];
  for (const n of sizes) {
    const reference = await measure(await startReferenceTarget(), n, searches, idleSeconds);
    const ours = await measure(await startStandaloneTarget(passThroughEnv()), n, searches, idleSeconds);
    all.push(reference, ours);
    pairs.push([reference, ours]);
    // As each size completes, so a long run shows its figures early.
    printComparison(reference, [ours]);
  }
  printResults(all, searches);
  return 0;
}
