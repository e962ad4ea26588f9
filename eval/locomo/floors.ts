import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { floorTo4 } from "../retrieval/floors.js";
import { LOCOMO_METRICS, LOCOMO_METRIC_LABELS, type LocomoMetrics } from "./metrics.js";

/**
 * LoCoMo's committed floors: the fused ranking's overall metrics, with the model they were
 * measured with. The same ratchet as the retrieval gate (eval/retrieval/floors.ts): `--record`
 * writes the measured values rounded down and refuses when any would go down; a run with another
 * model fails, since its numbers are not comparable (new floors for it are set in review, by
 * deleting the file and recording).
 */
export interface LocomoFloors {
  model: string;
  floors: LocomoMetrics;
}

/**
 * How far below a floor a run may land and still pass: three questions of 760. The int8 model's
 * kernels differ with the CPU's instruction set (AVX2, AVX-512 VNNI, AMX), so two machines of the
 * same kind embed a few texts a hair apart and a near tie can swap: the committed floors measured
 * hit@5 0.7461 on one machine and 0.7434 on another with the same code and data (docs/evals.md).
 */
export const CROSS_MACHINE_TOLERANCE = 0.004;

/** The committed floors; null before any were recorded. */
export function readLocomoFloors(url: URL): LocomoFloors | null {
  if (!existsSync(url)) return null;
  const parsed = JSON.parse(readFileSync(url, "utf8")) as LocomoFloors;
  if (typeof parsed.model !== "string") throw new Error("LoCoMo floors file has no model");
  for (const name of LOCOMO_METRICS) if (typeof parsed.floors?.[name] !== "number") throw new Error(`LoCoMo floors file has no number for ${name}`);
  return parsed;
}

export function writeLocomoFloors(url: URL, file: LocomoFloors): void {
  writeFileSync(url, `${JSON.stringify(file, null, 2)}\n`);
}

/** Why the measured metrics fail the floors, less the cross-machine tolerance (empty when they pass), naming the model first. */
export function floorFailures(file: LocomoFloors | null, model: string, measured: LocomoMetrics): string[] {
  if (file === null) return ["no floors recorded yet (eval/locomo/floors.json): run with --record"];
  if (file.model !== model) return [`floors were recorded with model ${file.model}, this run used ${model}: its numbers are not comparable`];
  return LOCOMO_METRICS.filter((name) => measured[name] + CROSS_MACHINE_TOLERANCE < file.floors[name]).map(
    (name) => `${LOCOMO_METRIC_LABELS[name]} ${measured[name].toFixed(4)} is below its floor ${file.floors[name]}`,
  );
}

/** The floors `--record` writes: the measured values rounded down to four decimals, never lower than before. */
export function ratchetLocomo(file: LocomoFloors | null, model: string, measured: LocomoMetrics): { next: LocomoFloors } | { refused: string[] } {
  const floors = Object.fromEntries(LOCOMO_METRICS.map((name) => [name, floorTo4(measured[name])])) as LocomoMetrics;
  if (file === null) return { next: { model, floors } };
  const refused = floorFailures(file, model, floors);
  return refused.length > 0
    ? { refused }
    : { next: { model, floors: Object.fromEntries(LOCOMO_METRICS.map((n) => [n, Math.max(floors[n], file.floors[n])])) as LocomoMetrics } };
}
