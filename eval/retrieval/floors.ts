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
  /**
   * Metrics measured and printed but not gated on this fixture (no policy yet meets them there
   * together with the other fixture's floors; docs/evals.md says which and why).
   */
  advisory?: MetricName[];
}

/** One fixture's entry in floors.json. */
type FixtureFloorsEntry = Metrics & { advisory?: MetricName[] };

/** floors.json: one model, and one set of floors per fixture (each ratchets on its own). */
export interface FloorsByFixture {
  model: string;
  fixtures: Record<string, FixtureFloorsEntry>;
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

export function readFloors(url: URL): FloorsByFixture {
  const parsed = JSON.parse(readFileSync(url, "utf8")) as FloorsByFixture;
  for (const [fixture, floors] of Object.entries(parsed.fixtures ?? {})) {
    for (const name of METRIC_NAMES) {
      if (typeof floors?.[name] !== "number") throw new Error(`floors file has no number for ${fixture}.${name}`);
    }
  }
  return parsed;
}

/** One fixture's floors; a fixture not yet recorded has the minimums only. */
export function fixtureFloors(file: FloorsByFixture, fixture: string): FloorsFile {
  const entry = file.fixtures[fixture];
  if (!entry) return { model: file.model, floors: { ...MINIMUM_FLOORS } };
  const { advisory, ...floors } = entry;
  return { model: file.model, floors, ...(advisory ? { advisory } : {}) };
}

function effectiveFloor(file: FloorsFile, name: MetricName): number {
  return Math.max(file.floors[name], MINIMUM_FLOORS[name]);
}

export interface FloorCheck {
  name: MetricName;
  value: number;
  floor: number;
  ok: boolean;
  /** Measured, not gated (ok is then always true). */
  advisory: boolean;
}

export function checkFloors(file: FloorsFile, metrics: Metrics): FloorCheck[] {
  return METRIC_NAMES.map((name) => {
    const floor = effectiveFloor(file, name);
    const advisory = file.advisory?.includes(name) ?? false;
    return { name, value: metrics[name], floor, ok: advisory || metrics[name] + EPSILON >= floor, advisory };
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
    // An advisory metric keeps its minimum as the target; it never blocks recording.
    if (file.advisory?.includes(name)) {
      floors[name] = effectiveFloor(file, name);
      continue;
    }
    if (recorded + EPSILON < effectiveFloor(file, name)) refused.push(`${METRIC_LABELS[name]} ${recorded} is below its floor ${effectiveFloor(file, name)}`);
    floors[name] = Math.max(recorded, effectiveFloor(file, name));
  }
  return refused.length > 0 ? { refused } : { next: { model, floors, ...(file.advisory ? { advisory: file.advisory } : {}) } };
}

export function writeFloors(url: URL, file: FloorsByFixture): void {
  writeFileSync(url, `${JSON.stringify(file, null, 2)}\n`);
}
