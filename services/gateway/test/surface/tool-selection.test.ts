/**
 * The tool-selection eval (`npm run eval:tools`; part of `make test`). Every tool on the committed
 * surface snapshot carries five agent utterances (surface/utterances.json). A deterministic
 * selector scores each utterance against every tool's name + description and the run must hold the
 * recorded floors on accuracy and margin and the ceiling on description overlap
 * (surface/tool-selection-bounds.json). A new tool, or a rewritten description, earns its place
 * by keeping these numbers; docs/mcp-surface.md says how.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createEmbedder } from "@3ngram/embeddings";
import { describe, expect, it } from "vitest";
import type { SurfaceSnapshot } from "./live-surface.js";
import { SURFACE_DIR } from "./live-surface.js";
import { SEMANTIC_WEIGHT, evaluate } from "./tool-selector.js";

interface Bounds {
  semanticWeight: number;
  accuracyFloor: number;
  meanMarginFloor: number;
  minMarginFloor: number;
  overlapCeiling: number;
}

/** The model the bounds were recorded with; changing it means re-recording every bound. */
const TOOL_SELECTION_MODEL = "use-lite";

const readJson = <T>(file: string): T => JSON.parse(readFileSync(join(SURFACE_DIR, file), "utf8")) as T;
const UTTERANCES_PER_TOOL = 5;

describe("tool-selection eval", () => {
  const snapshot = readJson<SurfaceSnapshot>("snapshot.json");
  const { utterances } = readJson<{ utterances: Record<string, string[]> }>("utterances.json");
  const bounds = readJson<Bounds>("tool-selection-bounds.json");
  const tools = snapshot.tools.map((t) => ({ name: t.name, description: t.description ?? "" }));

  it(`gives every tool on the surface exactly ${UTTERANCES_PER_TOOL} utterances, and none to a tool it lacks`, () => {
    expect(Object.keys(utterances).sort()).toEqual(tools.map((t) => t.name).sort());
    for (const tool of tools) expect(new Set(utterances[tool.name]).size, tool.name).toBe(UTTERANCES_PER_TOOL);
  });

  it("holds the recorded floors on accuracy and margin and the ceiling on description overlap", async () => {
    expect(SEMANTIC_WEIGHT, "the selector changed: re-record the bounds").toBe(bounds.semanticWeight);
    const cases = tools.flatMap((t) => (utterances[t.name] ?? []).map((utterance) => ({ utterance, expected: t.name })));
    // A fixed yardstick, not the server's default model: the bounds measure the descriptions, and a
    // new default model must not move them (docs/mcp-surface.md, "Tool-selection eval").
    const embedder = await createEmbedder({ provider: "local", model: TOOL_SELECTION_MODEL });
    const report = await evaluate(embedder, tools, cases);
    const misses = report.selections.filter((s) => s.chosen !== s.expected);
    const round = (n: number) => Math.round(n * 10_000) / 10_000;
    console.log(
      [
        `tool-selection eval: ${report.tools} tools, ${report.utterances} utterances`,
        `  accuracy     ${round(report.accuracy)}  (floor ${bounds.accuracyFloor})`,
        `  mean margin  ${round(report.meanMargin)}  (floor ${bounds.meanMarginFloor})`,
        `  min margin   ${round(report.minMargin)}  (floor ${bounds.minMarginFloor})`,
        `  overlap      ${round(report.overlap)}  (ceiling ${bounds.overlapCeiling}; ${report.overlapPair.join(" ~ ")})`,
        ...misses.map((s) => `  miss: "${s.utterance}" → ${s.chosen} (expected ${s.expected}, margin ${round(s.margin)})`),
        ...report.selections
          .filter((s) => s.chosen === s.expected)
          .sort((a, b) => a.margin - b.margin)
          .slice(0, 3)
          .map((s) => `  closest call: "${s.utterance}" → ${s.chosen} (margin ${round(s.margin)})`),
      ].join("\n"),
    );
    expect(report.accuracy).toBeGreaterThanOrEqual(bounds.accuracyFloor);
    expect(report.meanMargin).toBeGreaterThanOrEqual(bounds.meanMarginFloor);
    expect(report.minMargin).toBeGreaterThanOrEqual(bounds.minMarginFloor);
    expect(report.overlap).toBeLessThanOrEqual(bounds.overlapCeiling);
  });
});
