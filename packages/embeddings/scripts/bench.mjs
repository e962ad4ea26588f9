// Measures the bundled local model: cold load time and embeddings/second for
// 64 short texts (embedded in batches of 16). Run after building: npm run bench
import { performance } from "node:perf_hooks";
import { HashingEmbedder, LocalModelEmbedder, LocalModelPool } from "../dist/index.js";

const ROUNDS = 5;
const texts = Array.from(
  { length: 64 },
  (_, i) => `Note ${i}: the user prefers ${["dark mode", "tabs over spaces", "TypeScript", "short answers"][i % 4]} ` + `when working on project ${i % 7}.`,
);

const local = new LocalModelEmbedder();
const loadStart = performance.now();
await local.warmup();
const loadMs = performance.now() - loadStart;

await local.embed(texts.slice(0, 16)); // first inference compiles kernels; keep it out of the figures
const rates = [];
for (let round = 0; round < ROUNDS; round++) {
  const start = performance.now();
  await local.embed(texts);
  rates.push((texts.length * 1000) / (performance.now() - start));
}
rates.sort((a, b) => a - b);

const hashing = new HashingEmbedder();
const hashingTexts = Array.from({ length: 10_000 }, (_, i) => `${texts[i % texts.length]} #${i}`);
const hashingStart = performance.now();
await hashing.embed(hashingTexts);
const hashingRate = (hashingTexts.length * 1000) / (performance.now() - hashingStart);

console.log(`local model load (import + init): ${loadMs.toFixed(0)} ms`);
console.log(
  `local model, 64 short texts in batches of 16: median ${rates[Math.floor(ROUNDS / 2)].toFixed(1)} embeddings/s ` +
    `(min ${rates[0].toFixed(1)}, max ${rates[ROUNDS - 1].toFixed(1)}, ${ROUNDS} rounds)`,
);
console.log(`hashing-512, 10000 texts: ${hashingRate.toFixed(0)} embeddings/s`);

// Concurrent single-text calls (what a loaded memory or search service sees): in-thread they run
// one at a time; the pool batches them and spreads the batches over its workers.
const CONCURRENT = 96;
const single = texts
  .concat(texts)
  .slice(0, CONCURRENT)
  .map((text, i) => `${text} (${i})`);
// The event loop's longest stall while embedding (a 5 ms ticker's largest gap): what any other
// request in the process would wait.
let loopDelay;
async function concurrentRate(embedder) {
  let last = performance.now();
  let worst = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 5);
  const start = performance.now();
  await Promise.all(single.map((text) => embedder.embed([text])));
  const end = performance.now();
  clearInterval(ticker);
  worst = Math.max(worst, end - last);
  loopDelay = `longest event-loop stall ${worst.toFixed(0)} ms`;
  return (single.length * 1000) / (end - start);
}
console.log(`in-thread, ${CONCURRENT} concurrent single-text calls: ${(await concurrentRate(local)).toFixed(1)} embeddings/s (${loopDelay})`);
for (const workers of [1, 2]) {
  const pool = new LocalModelPool({ workers });
  await pool.warmup();
  await concurrentRate(pool);
  const poolRates = [];
  for (let round = 0; round < 3; round++) poolRates.push(await concurrentRate(pool));
  poolRates.sort((a, b) => a - b);
  console.log(`pool of ${workers}, ${CONCURRENT} concurrent single-text calls: median ${poolRates[1].toFixed(1)} embeddings/s (last round: ${loopDelay})`);
  await pool.close();
}
// One query at a time: what a lone search pays for its query vector.
for (const [label, embedder] of [
  ["in-thread", local],
  ["pool of 1", new LocalModelPool({ workers: 1 })],
]) {
  await embedder.embed(["warm"]);
  const times = [];
  for (let i = 0; i < 40; i++) {
    const start = performance.now();
    await embedder.embed([`what did we decide about storage ${i}`]);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  console.log(`${label}, one query at a time: p50 ${times[20].toFixed(1)} ms, p95 ${times[38].toFixed(1)} ms`);
  await embedder.close?.();
}
