// Measures the bundled local model on each backend, back to back in one process so both see the
// same machine: load time, one query at a time (p50/p95), batches of 16 and 64 texts, and
// concurrent single-text calls through worker pools. Run after building: npm run bench
// Backends: all by default, or the ones named as arguments (`npm run bench -- onnx`).
import { performance } from "node:perf_hooks";
import { HashingEmbedder, LOCAL_BACKENDS, LocalModelEmbedder, LocalModelPool } from "../dist/index.js";

const backends = process.argv.length > 2 ? process.argv.slice(2) : [...LOCAL_BACKENDS].reverse();
for (const backend of backends) {
  if (!LOCAL_BACKENDS.includes(backend)) throw new Error(`unknown backend ${backend}; one of ${LOCAL_BACKENDS.join(", ")}`);
}

const ROUNDS = 5;
const texts = Array.from(
  { length: 64 },
  (_, i) => `Note ${i}: the user prefers ${["dark mode", "tabs over spaces", "TypeScript", "short answers"][i % 4]} ` + `when working on project ${i % 7}.`,
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
  await embedder.embed(["warm"]);
  const times = [];
  for (let i = 0; i < 60; i++) {
    const start = performance.now();
    await embedder.embed([`what did we decide about storage ${i}`]);
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
  return `${median(rates).toFixed(1)} embeddings/s`;
}

/**
 * Concurrent single-text calls (what a loaded memory or search service sees), with the event
 * loop's longest stall meanwhile (a 5 ms ticker's largest gap): what any other request would wait.
 */
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
  return { rate: (single.length * 1000) / (end - start), stall: worst };
}

for (const backend of backends) {
  const local = new LocalModelEmbedder({ backend });
  const loadStart = performance.now();
  await local.warmup();
  console.log(`[${backend}] load (import + init): ${(performance.now() - loadStart).toFixed(0)} ms`);
  console.log(`[${backend}] in-thread, one query at a time: ${await oneAtATime(local)}`);
  console.log(`[${backend}] in-thread, batches of 16: ${await batchRate(local, 16)}; one call of 64 texts (4 batches): ${await batchRate(local, 64)}`);
  const inThread = await concurrentRate(local);
  console.log(
    `[${backend}] in-thread, ${CONCURRENT} concurrent single-text calls: ${inThread.rate.toFixed(1)} embeddings/s (longest event-loop stall ${inThread.stall.toFixed(0)} ms)`,
  );
  for (const workers of [1, 2]) {
    const pool = new LocalModelPool({ workers, backend });
    await pool.warmup();
    if (workers === 1) {
      console.log(`[${backend}] pool of 1, one query at a time: ${await oneAtATime(pool)}`);
      console.log(`[${backend}] pool of 1, batches of 16: ${await batchRate(pool, 16)}`);
    }
    await concurrentRate(pool);
    const runs = [];
    for (let round = 0; round < 3; round++) runs.push(await concurrentRate(pool));
    const rate = median(runs.map((run) => run.rate));
    console.log(
      `[${backend}] pool of ${workers}, ${CONCURRENT} concurrent single-text calls: median ${rate.toFixed(1)} embeddings/s (longest stall ${Math.max(...runs.map((run) => run.stall)).toFixed(0)} ms)`,
    );
    await pool.close();
  }
}

const hashing = new HashingEmbedder();
const hashingTexts = Array.from({ length: 10_000 }, (_, i) => `${texts[i % texts.length]} #${i}`);
const hashingStart = performance.now();
await hashing.embed(hashingTexts);
console.log(`hashing-512, 10000 texts: ${((hashingTexts.length * 1000) / (performance.now() - hashingStart)).toFixed(0)} embeddings/s`);
