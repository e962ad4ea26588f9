// Measures the bundled local model: cold load time and embeddings/second for
// 64 short texts (embedded in batches of 16). Run after building: npm run bench
import { performance } from "node:perf_hooks";
import { HashingEmbedder, LocalModelEmbedder } from "../dist/index.js";

const ROUNDS = 5;
const texts = Array.from(
  { length: 64 },
  (_, i) =>
    `Note ${i}: the user prefers ${["dark mode", "tabs over spaces", "TypeScript", "short answers"][i % 4]} ` +
    `when working on project ${i % 7}.`,
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
