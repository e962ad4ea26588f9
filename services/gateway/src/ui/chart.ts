/**
 * A fact's numeric history as an inline SVG step chart over valid time: each generation is a
 * point where it became true, held flat until the next one replaced it. Points link to the version
 * of the memory that asserted them, where its page shows what that version changed; replaced
 * generations are hollow, the current one filled. No script: the links and the <title> tooltips
 * are plain SVG, so the strict CSP stays as it is.
 */
import type { FactRecord } from "@3ngram/schema";
import { versionHref } from "./anchors.js";
import { fullTime, shortDate } from "./format.js";
import { html, type Html } from "../http/html.js";

const WIDTH = 640;
const HEIGHT = 260;
const PAD = { left: 56, right: 16, top: 16, bottom: 36 };

/**
 * Whether a value holds at `now`: it has begun and not yet ended. A value recorded ahead of its
 * time (valid from next month, say) is not current yet, and the one it will replace still is.
 */
function holdsAt(f: FactRecord, now: number): boolean {
  return Date.parse(f.validFrom) <= now && (f.validTo === null || Date.parse(f.validTo) > now);
}

/** How a value stands at `now`, in the words the chart's tooltips and the table use. */
export function standing(f: FactRecord, now: number): "current" | "upcoming" | "replaced" {
  if (holdsAt(f, now)) return "current";
  return Date.parse(f.validFrom) > now ? "upcoming" : "replaced";
}

/** Every value of the series reads as a finite number (the unit lives in the predicate). */
export function isNumericSeries(facts: readonly FactRecord[]): boolean {
  return facts.length > 0 && facts.every((f) => f.value.trim() !== "" && Number.isFinite(Number(f.value)));
}

function niceTicks(min: number, max: number, count = 4): number[] {
  if (min === max) return [min];
  const step = 10 ** Math.floor(Math.log10((max - min) / count));
  const unit = [1, 2, 5, 10].map((m) => m * step).find((s) => (max - min) / s <= count) ?? step * 10;
  const ticks: number[] = [];
  for (let t = Math.ceil(min / unit) * unit; t <= max + 1e-9; t += unit) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

/** The chart for one subject + predicate, facts oldest first (as a range read returns them). */
export function factChart(label: string, facts: readonly FactRecord[], now: number): Html {
  // An open value runs to now, or only from its start when that is still ahead.
  const points = facts.map((f) => {
    const start = Date.parse(f.validFrom);
    return { fact: f, start, end: f.validTo === null ? Math.max(now, start) : Date.parse(f.validTo), value: Number(f.value) };
  });
  const t0 = Math.min(...points.map((p) => p.start));
  const t1 = Math.max(now, ...points.map((p) => p.end));
  let v0 = Math.min(...points.map((p) => p.value));
  let v1 = Math.max(...points.map((p) => p.value));
  if (v0 === v1) [v0, v1] = [v0 - 1, v1 + 1];
  const margin = (v1 - v0) * 0.1;
  [v0, v1] = [v0 - margin, v1 + margin];
  const x = (t: number) => PAD.left + ((t - t0) / Math.max(t1 - t0, 1)) * (WIDTH - PAD.left - PAD.right);
  const y = (v: number) => HEIGHT - PAD.bottom - ((v - v0) / (v1 - v0)) * (HEIGHT - PAD.top - PAD.bottom);
  const round = (n: number) => Math.round(n * 10) / 10;

  const path = points.map((p, i) => `${i === 0 ? "M" : "L"}${round(x(p.start))},${round(y(p.value))} H${round(x(p.end))}`).join(" ");
  const yTicks = niceTicks(v0, v1).map(
    (t) =>
      html`<line class="grid-line" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${round(y(t))}" y2="${round(y(t))}"></line><text class="label" x="${PAD.left - 6}" y="${round(y(t)) + 4}" text-anchor="end">${t}</text>`,
  );
  const dots = points.map((p) => {
    const stands = standing(p.fact, now);
    const state = stands === "replaced" ? `replaced ${fullTime(p.fact.validTo!)}` : stands;
    const circle = html`<circle class="point${stands === "current" ? "" : " superseded"}" cx="${round(x(p.start))}" cy="${round(y(p.value))}" r="6" data-value="${p.fact.value}"><title>${p.fact.value} from ${fullTime(p.fact.validFrom)} (${state})</title></circle>`;
    return p.fact.memoryId === null
      ? circle
      : html`<a href="${versionHref(p.fact.memoryId)}" aria-label="${p.fact.value}, ${shortDate(p.start)}, ${state}: open the memory at what this version changed">${circle}</a>`;
  });
  return html`<figure class="chart">
      <svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="group" aria-label="${label} over time, ${points.length} values">
        ${yTicks}
        <line class="axis" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${HEIGHT - PAD.bottom}" y2="${HEIGHT - PAD.bottom}"></line>
        <text class="label" x="${PAD.left}" y="${HEIGHT - 12}">${shortDate(t0)}</text>
        <text class="label" x="${WIDTH - PAD.right}" y="${HEIGHT - 12}" text-anchor="end">${shortDate(t1)}</text>
        <path class="step" d="${path}"></path>
        ${dots}
      </svg>
      <figcaption class="muted">Filled: the value that holds now. Hollow: values replaced, or not begun yet. Each point opens the memory that recorded it, at what that version changed.</figcaption>
    </figure>`;
}
