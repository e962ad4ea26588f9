// Measures each bundled model back to back in one run, so all see the same machine: load time and
// resident memory (each model in a fresh process), one query at a time (p50/p95, with the model's
// query marker), batches of 16 stored texts on the calling thread, and concurrent single-text calls
// through worker pools of 1 and 2. Run after building and fetching (npm run models -- --all):
//   npm run bench -w packages/embeddings                  every model
//   npm run bench -w packages/embeddings -- e5-small-v2   the ones named
import { execFileSync } from "node:child_process";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { BUNDLED_MODEL_NAMES, LocalModelEmbedder, LocalModelPool } from "../dist/index.js";

const ROUNDS = 5;
// Memory-like texts: a topic line and a sentence or two (~180 characters, the fixtures' average).
const texts = Array.from(
  { length: 64 },
  (_, i) =>
    `Project ${i % 7} ${["storage", "editor", "deploys", "reviews"][i % 4]}\n` +
    `We decided to keep ${["PostgreSQL for storage", "tabs over spaces", "deploys on Tuesdays", "two reviewers per change"][i % 4]} ` +
    `after the discussion on day ${i}; revisit if the team grows past ${i + 5} people or the costs double.`,
);
const CONCURRENT = 96;
const single = texts
  .concat(texts)
  .slice(0, CONCURRENT)
  .map((text, i) => `${text} (${i})`);

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
function percentiles(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return `p50 ${at(0.5).toFixed(1)} ms, p95 ${at(0.95).toFixed(1)} ms`;
}

/** One query at a time: what a lone search pays for its query vector. */
async function oneAtATime(embedder) {
  await embedder.embed(["warm"], { purpose: "query" });
  const times = [];
  for (let i = 0; i < 60; i++) {
    const start = performance.now();
    await embedder.embed([`what did we decide about storage ${i}`], { purpose: "query" });
    times.push(performance.now() - start);
  }
  return percentiles(times);
}

async function batchRate(embedder, size) {
  const batch = texts.slice(0, size);
  await embedder.embed(batch);
  const rates = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = performance.now();
    await embedder.embed(batch);
    rates.push((batch.length * 1000) / (performance.now() - start));
  }
  return `${median(rates).toFixed(1)} texts/s`;
}

/** Concurrent single-text calls, what a loaded memory service sees. */
async function concurrentRate(embedder) {
  const start = performance.now();
  await Promise.all(single.map((text) => embedder.embed([text])));
  return (single.length * 1000) / (performance.now() - start);
}

/** Load time and resident memory of one model in a process of its own (this file, re-run with --load). */
async function loadAlone(model) {
  const before = process.memoryUsage().rss;
  const start = performance.now();
  const embedder = new LocalModelEmbedder({ model });
  await embedder.warmup();
  await embedder.embed(["warm"]);
  const loadMs = performance.now() - start;
  await embedder.embed(texts);
  console.log(JSON.stringify({ loadMs, rssMb: process.memoryUsage().rss / 2 ** 20, addedMb: (process.memoryUsage().rss - before) / 2 ** 20 }));
}

if (process.argv[2] === "--load") {
  await loadAlone(process.argv[3]);
  process.exit(0);
}

const models = process.argv.length > 2 ? process.argv.slice(2) : BUNDLED_MODEL_NAMES;
for (const model of models) {
  if (!BUNDLED_MODEL_NAMES.includes(model)) throw new Error(`unknown model ${model}; one of ${BUNDLED_MODEL_NAMES.join(", ")}`);
  const alone = JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), "--load", model], { encoding: "utf8" }));
  console.log(
    `[${model}] load ${alone.loadMs.toFixed(0)} ms; resident ${alone.rssMb.toFixed(0)} MB after 64 texts (${alone.addedMb.toFixed(0)} MB for the model)`,
  );
  const local = new LocalModelEmbedder({ model });
  console.log(`[${model}] one query at a time: ${await oneAtATime(local)}`);
  console.log(`[${model}] batches of 16 stored texts: ${await batchRate(local, 16)}`);
  for (const workers of [1, 2]) {
    const pool = new LocalModelPool({ workers, model });
    await pool.warmup();
    await concurrentRate(pool);
    const rates = [];
    for (let round = 0; round < 3; round++) rates.push(await concurrentRate(pool));
    console.log(`[${model}] pool of ${workers}, ${CONCURRENT} concurrent single-text calls: median ${median(rates).toFixed(1)} texts/s`);
    await pool.close();
  }
}
