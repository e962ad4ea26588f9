import { readFileSync, writeFileSync } from "node:fs";
import { METRIC_LABELS, METRIC_NAMES, type MetricName, type Metrics } from "./metrics.js";

/**
 * The committed floors. Each metric must stay at or above its floor; `--record` raises floors to
 * the measured values and refuses when any measured value is below its floor, so floors only
 * ratchet up. The minimums apply even if the file is edited below them.
 */
export interface FloorsFile {
  /** The embedding model the floors were measured with; another model needs its own floors. */
  model: string;
  floors: Metrics;
}

export const MINIMUM_FLOORS: Metrics = {
  recallAt5: 0.9,
  mrrAt5: 0.85,
  supersession: 0.95,
  abstentionPrecision: 1,
  answerableAboveTau: 0.9,
};

/** Comparisons allow for the last bit of floating-point noise; the metrics are ratios of small integers. */
const EPSILON = 1e-9;

export function readFloors(url: URL): FloorsFile {
  const parsed = JSON.parse(readFileSync(url, "utf8")) as FloorsFile;
  for (const name of METRIC_NAMES) {
    if (typeof parsed.floors?.[name] !== "number") throw new Error(`floors file has no number for ${name}`);
  }
  return parsed;
}

function effectiveFloor(file: FloorsFile, name: MetricName): number {
  return Math.max(file.floors[name], MINIMUM_FLOORS[name]);
}

export interface FloorCheck {
  name: MetricName;
  value: number;
  floor: number;
  ok: boolean;
}

export function checkFloors(file: FloorsFile, metrics: Metrics): FloorCheck[] {
  return METRIC_NAMES.map((name) => {
    const floor = effectiveFloor(file, name);
    return { name, value: metrics[name], floor, ok: metrics[name] + EPSILON >= floor };
  });
}

/** Rounds down to four decimals, so a recorded floor never exceeds the value it came from. */
export function floorTo4(value: number): number {
  return Math.floor(value * 10_000 + EPSILON) / 10_000;
}

/**
 * The floors `--record` would write: the measured values, rounded down. Answers the reasons
 * instead when recording would lower any floor (or the model differs).
 */
export function ratchet(file: FloorsFile, model: string, metrics: Metrics): { next: FloorsFile } | { refused: string[] } {
  const refused: string[] = [];
  if (file.model !== model) refused.push(`floors were measured with ${file.model}, this run used ${model}`);
  const floors = {} as Metrics;
  for (const name of METRIC_NAMES) {
    const recorded = floorTo4(metrics[name]);
    if (recorded + EPSILON < effectiveFloor(file, name)) refused.push(`${METRIC_LABELS[name]} ${recorded} is below its floor ${effectiveFloor(file, name)}`);
    floors[name] = Math.max(recorded, effectiveFloor(file, name));
  }
  return refused.length > 0 ? { refused } : { next: { model, floors } };
}

export function writeFloors(url: URL, file: FloorsFile): void {
  writeFileSync(url, `${JSON.stringify(file, null, 2)}\n`);
}
