/** Prints workload results as Markdown tables (pasted into docs/benchmarks.md as they come). */
import type { Percentiles } from "./stats.js";
import { ms, pct, type Result } from "./workload.js";

const triple = (p: Percentiles | null) => (p ? `${ms(p.p50)} / ${ms(p.p95)} / ${ms(p.p99)}` : "–");

export function printResults(results: readonly Result[], searches: number): void {
  console.log(
    `\nstandalone workload (Node.js ${process.versions.node}; ${searches} rare-word searches, limit 10; paraphrases limit 5; chronological: type filter, limit 25; ms)\n`,
  );
  console.log(
    "| target | N | write p50 by tenth (first → last) | search p50 / p95 / p99, first time | same, embedding cached | chronological p50 / p95 / p99 | rare word first / top 10 | paraphrase first / top 5 | RSS after the searches / after idling |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|");
  for (const r of results) {
    console.log(
      `| ${r.target} | ${r.n} | ${r.writeTenths.map(ms).join(" ")} | ${triple(r.searchFirst)} | ${triple(r.searchCached)} | ${triple(r.chronological)} | ${pct(r.rareHit1)} / ${pct(r.rareHit10)} | ${pct(r.paraphraseTop1)} / ${pct(r.paraphraseTop5)} (${r.paraphraseCount}) | ${r.rssMb.toFixed(0)} / ${r.rssIdleMb === null ? "–" : r.rssIdleMb.toFixed(0)} MB |`,
    );
  }
}

/** One row per figure: each target's value and its ratio to the reference (the first target). */
export function printComparison(reference: Result, others: readonly Result[]): void {
  const rows: Array<[label: string, value: (r: Result) => number, format: (x: number) => string]> = [
    ["write p50", (r) => r.write.p50, ms],
    ["write p50, first tenth", (r) => r.writeTenths[0]!, ms],
    ["write p50, last tenth", (r) => r.writeTenths[9]!, ms],
    ["search p50, first time", (r) => r.searchFirst.p50, ms],
    ["search p95, first time", (r) => r.searchFirst.p95, ms],
    ["search p99, first time", (r) => r.searchFirst.p99, ms],
    ["search p50, repeated query", (r) => r.searchCached.p50, ms],
    ["search p95, repeated query", (r) => r.searchCached.p95, ms],
    ["rare word ranked first", (r) => r.rareHit1, pct],
    ["rare word in the first 10", (r) => r.rareHit10, pct],
    ["paraphrase ranked first", (r) => r.paraphraseTop1, pct],
    ["paraphrase in the first 5", (r) => r.paraphraseTop5, pct],
    ["RSS (MB)", (r) => r.rssMb, (x) => x.toFixed(0)],
    ["RSS after idling (MB)", (r) => r.rssIdleMb ?? NaN, (x) => (Number.isFinite(x) ? x.toFixed(0) : "–")],
  ];
  console.log(`\nN = ${reference.n} (ratio = target / ${reference.target}; for latency and memory lower is better)\n`);
  console.log(`| figure | ${reference.target} | ${others.map((o) => `${o.target} | ratio`).join(" | ")} |`);
  console.log(`|---|---|${others.map(() => "---|---|").join("")}`);
  for (const [label, value, format] of rows) {
    const base = value(reference);
    const cells = others.map((o) => {
      const v = value(o);
      const ratio = Number.isFinite(v / base) && base !== 0 ? `${(v / base).toFixed(2)}×` : "–";
      return `${format(v)} | ${ratio}`;
    });
    console.log(`| ${label} | ${format(base)} | ${cells.join(" | ")} |`);
  }
}
