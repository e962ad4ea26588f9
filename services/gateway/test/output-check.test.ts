/**
 * The output check the tool-outputs integration test relies on fails on every kind of wrong
 * answer: a missing, extra or mistyped field, keys out of the schema's order, a value the schema
 * would fill in, a text mirror that drifted, an error result.
 */
import { searchOutputSchema } from "@3ngram/schema";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import type { ToolResult } from "./support/mcp-client.js";
import { outputProblems } from "./support/output-check.js";

/** A search answer in the schema's key order, as the gateway sends it. */
const hit = {
  id: "0190c0de-0000-7000-8000-000000000001",
  memoryType: "decision",
  topic: "database",
  content: "We chose PostgreSQL.",
  contentLength: 20,
  truncated: false,
  scope: "work",
  project: null,
  recordedAt: "2026-01-31T09:00:00.000Z",
  score: 0.5,
};
const answer = {
  hits: [hit],
  count: 1,
  hasMore: false,
  coverage: {
    order: "relevance",
    legs: [{ leg: "fts", available: true, candidates: 1 }],
    filters: { memoryTypes: [], scope: null, projects: [], status: "active", recordedAfter: null, recordedBefore: null },
    appliedScope: null,
    asOf: null,
    poolSize: 1,
    hasMore: false,
    abstained: false,
    evidence: { bestCosine: null, anyLexical: true, scoreGap: null, termCoverage: 1 },
  },
};

const result = (structured: Record<string, unknown>, text = JSON.stringify(structured)): ToolResult => ({
  structuredContent: structured,
  content: [{ type: "text", text }],
});

describe("the tool output check", () => {
  it("finds nothing wrong in an answer that is exactly what the schema describes", () => {
    expect(outputProblems(searchOutputSchema, result(answer))).toEqual([]);
  });

  it("names a missing, a mistyped and an unknown field", () => {
    const { count: _count, ...noCount } = answer;
    expect(outputProblems(searchOutputSchema, result(noCount))).toEqual([expect.stringMatching(/^count: /)]);
    expect(outputProblems(searchOutputSchema, result({ ...answer, hasMore: "no" }))).toEqual([expect.stringMatching(/^hasMore: /)]);
    expect(outputProblems(searchOutputSchema, result({ ...answer, coverage: { ...answer.coverage, extra: 1 } }))).toEqual([
      expect.stringMatching(/^coverage: .*extra/),
    ]);
    // A hit that is neither full nor compact.
    expect(outputProblems(searchOutputSchema, result({ ...answer, hits: [{ ...hit, score: undefined }] }))).not.toEqual([]);
  });

  it("refuses keys out of the schema's order, though every value is right", () => {
    const { hits, ...rest } = answer;
    expect(outputProblems(searchOutputSchema, result({ ...rest, hits }))).toEqual([expect.stringContaining("parsing changes it")]);
    const { score, ...hitRest } = hit;
    expect(outputProblems(searchOutputSchema, result({ ...answer, hits: [{ score, ...hitRest }] }))).toEqual([expect.stringContaining("parsing changes it")]);
  });

  it("refuses an answer the schema would fill in", () => {
    const withDefault = z.strictObject({ count: z.int(), items: z.array(z.string()).default([]) });
    expect(outputProblems(withDefault, result({ count: 0 }))).toEqual([expect.stringContaining("parsing changes it")]);
  });

  it("refuses a text mirror that is not the structured content's JSON, and an error result", () => {
    expect(outputProblems(searchOutputSchema, result(answer, JSON.stringify({ ...answer, count: 2 })))).toEqual([expect.stringContaining("text mirror")]);
    expect(outputProblems(searchOutputSchema, result(answer, JSON.stringify(answer, null, 1)))).toEqual([expect.stringContaining("text mirror")]);
    expect(outputProblems(searchOutputSchema, { isError: true, content: [{ type: "text", text: "internal_error" }] })).toEqual([
      expect.stringContaining("an error result"),
    ]);
    expect(outputProblems(searchOutputSchema, { content: [{ type: "text", text: "{}" }] })).toEqual(["no structured content"]);
  });
});
