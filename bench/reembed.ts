/**
 * Re-embedding benchmark: what a user sees when a standalone server starts with another embedding
 * model on a data directory written with the old one. N memories are written with the hashing
 * embedder (quick to load; to the new model its vectors are another model's), then the server
 * restarts on the same directory with the bundled model (or the EMBEDDINGS_* settings the bench is
 * given) and re-embeds them in the background. Meanwhile the bench searches (rare-word questions,
 * which the lexical leg answers whether their memory is re-embedded yet or not), writes, and reads
 * describe_environment's progress every 2 s; then the same searches and writes run again on the
 * idle server, for comparison.
 *
 *   npm run bench:reembed                          # N = 2,000
 *   npm run bench:reembed -- --sizes 10000
 *   npm run bench:reembed -- --quiet               # no searches or writes meanwhile: the re-embedding alone
 */
import { rmSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { connectMcp, type McpConnection } from "../test/support/mcp.js";
import type { EmbeddingProgress } from "../test/support/model-change.js";
import { passThroughEnv } from "./standalone.js";
import { startStandaloneTarget, type StandaloneTarget } from "./standalone-target.js";
import { flagValue, percentiles, type Percentiles } from "./stats.js";
import { generateCorpus, ms, pct, type GeneratedMemory } from "./workload.js";

/** Latency of searches and writes, and how often the rare word's memory came first. */
interface Traffic {
  search: Percentiles;
  rareFirst: number;
  write: Percentiles;
  writesPending: number;
  searches: number;
}

const PROGRESS_EVERY_MS = 2_000;
/** One write per this many searches. */
const WRITE_EVERY = 5;

export async function main(argv: readonly string[]): Promise<number> {
  const sizes = (flagValue(argv, "--sizes") ?? "2000").split(",").map(Number);
  for (const n of sizes) {
    const { memories } = generateCorpus(n);
    const loading = await startStandaloneTarget({ EMBEDDINGS_PROVIDER: "hashing" }, { keepDataDir: true });
    try {
      process.stderr.write(`writing ${n} memories with the hashing embedder…\n`);
      for (const memory of memories) await loading.remember(memory);
    } finally {
      await loading.close();
    }
    const started = performance.now();
    const target = await startStandaloneTarget(passThroughEnv(), { dataDir: loading.dataDir, corpus: memories });
    const up = performance.now() - started;
    try {
      const mcp = await connectMcp(target.mcpUrl, target.apiKey, { modern: true });
      const progress = async (): Promise<EmbeddingProgress> =>
        (await mcp.call<{ stats: { embeddings: EmbeddingProgress } }>("describe_environment", {})).stats.embeddings;
      const samples: Array<{ at: number; embedded: number; pending: number }> = [];
      const first = await progress();
      process.stderr.write(`restarted with ${first.model} in ${(up / 1000).toFixed(1)} s: ${first.embedded} embedded, ${first.pending} pending\n`);
      let lastRead = 0;
      let done = first.pending === 0;
      const during = await traffic(
        target,
        mcp,
        memories,
        async () => {
          if (performance.now() - lastRead >= PROGRESS_EVERY_MS) {
            lastRead = performance.now();
            const p = await progress();
            samples.push({ at: (lastRead - started) / 1000, embedded: p.embedded, pending: p.pending });
            process.stderr.write(`  ${samples.at(-1)!.at.toFixed(0)} s: ${p.embedded} embedded, ${p.pending} pending\n`);
            done = p.pending === 0;
          }
          return done;
        },
        Infinity,
        argv.includes("--quiet"),
      );
      // Re-embedding starts with the server: count from when it was up (the model loaded).
      const tookS = samples.at(-1)!.at - up / 1000;
      const after = await traffic(target, mcp, memories, async () => false, Math.min(300, Math.max(50, during.searches)));
      await mcp.close();
      const rate = n / tookS;
      const quiet = argv.includes("--quiet") ? "nothing else going on" : "searches and writes going on";
      console.log(`\nre-embedding ${n} memories (hashing-512 → ${first.model}), standalone, ${quiet}\n`);
      console.log(
        "| N | model | server up after | re-embedded in | memories/s | per 10,000 | search p50 / p95 during → after | rare word first during → after | write p50 / p95 during → after | writes left pending during |",
      );
      console.log("|---|---|---|---|---|---|---|---|---|---|");
      console.log(
        `| ${n} | ${first.model} | ${(up / 1000).toFixed(1)} s | ${tookS.toFixed(0)} s | ${rate.toFixed(1)} | ${(10_000 / rate / 60).toFixed(1)} min | ${ms(during.search.p50)} / ${ms(during.search.p95)} → ${ms(after.search.p50)} / ${ms(after.search.p95)} | ${pct(during.rareFirst)} → ${pct(after.rareFirst)} | ${ms(during.write.p50)} / ${ms(during.write.p95)} → ${ms(after.write.p50)} / ${ms(after.write.p95)} | ${during.writesPending} of ${Math.floor(during.searches / WRITE_EVERY)} |`,
      );
    } finally {
      await target.close();
      rmSync(loading.dataDir, { recursive: true, force: true });
    }
  }
  return 0;
}

/** Rare-word searches (one memory holds each word) with a write every WRITE_EVERY, until `stop()` or `limit` searches. */
async function traffic(
  target: StandaloneTarget,
  mcp: McpConnection,
  memories: readonly GeneratedMemory[],
  stop: () => Promise<boolean>,
  limit = Infinity,
  quiet = false,
): Promise<Traffic> {
  const searchMs: number[] = [];
  const writeMs: number[] = [];
  let rareFirst = 0;
  let writesPending = 0;
  let i = 0;
  while (i < limit && !(await stop())) {
    if (quiet) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    const memory = memories[(i * 7919) % memories.length]!;
    let t = performance.now();
    const hits = await target.search(memory.rare, 10);
    searchMs.push(performance.now() - t);
    if (hits[0] === memory.index) rareFirst += 1;
    i += 1;
    if (i % WRITE_EVERY === 0) {
      t = performance.now();
      const out = await mcp.call<{ embedded: string }>("remember", {
        memoryType: "note",
        topic: `traffic ${i}`,
        content: `A note written by the benchmark at ${performance.now()}.`,
      });
      writeMs.push(performance.now() - t);
      if (out.embedded !== "done") writesPending += 1;
    }
  }
  return { search: percentiles(searchMs), rareFirst: rareFirst / Math.max(1, i), write: percentiles(writeMs), writesPending, searches: i };
}
