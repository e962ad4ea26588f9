/**
 * What changed between versions, as the UI renders it: word-level differences with <del>/<ins>,
 * hostile text kept as text inside them, the stable anchor of each version, and the Facts page's
 * links to those anchors.
 */
import type { HistoryOutput, MemoryRecord } from "@3ngram/schema";
import { describe, expect, it } from "vitest";
import { render } from "../src/http/html.js";
import { versionAnchor, versionHref } from "../src/ui/anchors.js";
import { renderFactsPage } from "../src/ui/pages/facts.js";
import { renderMemoryPage } from "../src/ui/pages/memory.js";
import { wordDiff } from "../src/ui/word-diff.js";
import { factRecord } from "./support/fact-record.js";

const HOSTILE = `<script>alert("x")</script><img src=x onerror=alert(1)>`;
const NOW = Date.parse("2026-03-10T12:00:00Z");
const signedIn = { csrfToken: "token", canWrite: true };

function version(id: string, content: string, recordedAt: string, supersededBy: string | null, topic = "Release date"): MemoryRecord {
  return {
    id,
    memoryType: "decision",
    topic,
    content,
    contentLength: content.length,
    truncated: false,
    scope: "work",
    project: null,
    recordedAt,
    status: "active",
    tags: [],
    validFrom: recordedAt,
    validTo: supersededBy === null ? null : recordedAt,
    embedded: "done",
    supersededBy,
    commitment: null,
  };
}

/** Three versions, each replacing the one before, as GetHistory answers for the newest. */
function threeVersions(texts: [string, string, string], topics: [string, string, string] = ["Release date", "Release date", "Release date"]) {
  const [a, b, c] = ["0190c0de-0000-7000-8000-00000000000a", "0190c0de-0000-7000-8000-00000000000b", "0190c0de-0000-7000-8000-00000000000c"];
  const lineage = [
    version(a, texts[0], "2026-03-01T10:00:00Z", b, topics[0]),
    version(b, texts[1], "2026-03-02T10:00:00Z", c, topics[1]),
    version(c, texts[2], "2026-03-03T10:00:00Z", null, topics[2]),
  ];
  const history: HistoryOutput = {
    memoryId: c,
    lifecycleState: "current",
    lineage,
    edges: [
      { fromId: b, toId: a, edgeType: "supersedes", recordedAt: "2026-03-02T10:00:00Z" },
      { fromId: c, toId: b, edgeType: "supersedes", recordedAt: "2026-03-03T10:00:00Z" },
    ],
    events: [],
  };
  return { ids: { a, b, c }, history, page: renderMemoryPage({ memory: lineage[2]!, history, now: NOW }, signedIn) };
}

/** The markup of one version's entry on the timeline, found by its anchor. */
function entry(page: string, id: string): string {
  const start = page.indexOf(`id="${versionAnchor(id)}"`);
  expect(start, id).toBeGreaterThan(-1);
  return page.slice(start, page.indexOf("</li>", start));
}

describe("a word-level difference", () => {
  it("marks removed words with <del> and added ones with <ins>, keeping the rest as it was", () => {
    const diff = wordDiff("We ship atlas on 3 March.", "We ship atlas on 10 March after the audit.");
    expect(diff.changed).toBe(true);
    expect(render(diff.markup)).toBe("We ship atlas on <del>3</del><ins>10</ins> March <ins>after the audit</ins>.");
  });

  it("says when nothing changed", () => {
    const same = wordDiff("Same words here.", "Same words here.");
    expect(same.changed).toBe(false);
    expect(render(same.markup)).toBe("Same words here.");
  });

  it("escapes hostile text inside removed, added and unchanged parts alike", () => {
    const out = render(wordDiff(`keep ${HOSTILE} old "quoted"`, `keep ${HOSTILE} new <b>bold</b> & 'single'`).markup);
    expect(out).not.toMatch(/<(script|img|b)\b/);
    expect(out).toContain("&#60;script&#62;");
    expect(out).toContain("<del>");
    expect(out).toContain("<ins>");
    // Only the two markers are markup; every other angle bracket is an entity.
    expect(out.replace(/<\/?(del|ins)>/g, "")).not.toMatch(/[<>]/);
  });
});

describe("a memory's history", () => {
  it("shows each version's difference from the one before, under an anchor named by the version's id", () => {
    const { ids, page } = threeVersions([
      "We ship atlas on 3 March.",
      "We ship atlas on 10 March after the audit.",
      "We ship atlas on 17 March; the audit slipped a week.",
    ]);
    expect(entry(page, ids.a)).toContain("First written as:");
    expect(entry(page, ids.a)).not.toContain("<del>");
    const second = entry(page, ids.b);
    expect(second).toContain("Changed from version 1:");
    expect(second).toContain("<del>3</del><ins>10</ins>");
    const third = entry(page, ids.c);
    expect(third).toContain("Changed from version 2:");
    expect(third).toContain("<del>10</del><ins>17</ins>");
    expect(third).toContain("<ins>slipped a week</ins>");
    // The legend says what the marks mean in words, not only by colour.
    expect(page).toContain("<del>struck-through words</del> were removed and <ins>underlined words</ins> added");
    expect(page).not.toMatch(/<script|style=/);
  });

  it("keeps hostile text escaped inside the differences of content and topic", () => {
    const { ids, page } = threeVersions([`first ${HOSTILE}`, `second ${HOSTILE} "more"`, `third <b>${HOSTILE}</b>`], ["T", `T ${HOSTILE}`, `T ${HOSTILE}`]);
    expect(page).not.toMatch(/<(script|img|b)\b/);
    expect(entry(page, ids.b)).toContain("Topic: T <ins>");
    expect(entry(page, ids.b)).toContain("&#60;script&#62;");
    expect(entry(page, ids.c)).toContain("<del>second</del>");
  });

  it("says a version kept the text when only something else changed", () => {
    const { ids, page } = threeVersions(["Same.", "Same.", "Other."]);
    expect(entry(page, ids.b)).toContain("Same text as version 1.");
    expect(entry(page, ids.c)).toContain("<del>Same</del><ins>Other</ins>");
  });
});

describe("the Facts page", () => {
  const fact = (value: string, from: string, to: string | null, memoryId: string) =>
    factRecord(value, from, to, memoryId, { subject: "lifter:ana", predicate: "top_set.weight_kg" });

  it("links each value, in the chart and in the table, to the change of the version that recorded it", () => {
    const facts = [fact("80", "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", "m1"), fact("90", "2026-02-01T00:00:00Z", null, "m2")];
    const page = renderFactsPage({ subject: "lifter:ana", predicate: "", facts, full: false, now: NOW }, signedIn);
    for (const id of ["m1", "m2"]) expect(page.split(`href="${versionHref(id)}"`)).toHaveLength(3);
    expect(versionHref("m1")).toBe("/ui/memories/m1#version-m1");
  });

  it("draws a value recorded ahead of its time from its start, and keeps the one it will replace current until then", () => {
    // NOW is 2026-03-10: 90 holds from April, so 80 still holds now.
    const facts = [fact("80", "2026-01-01T00:00:00Z", "2026-04-01T00:00:00Z", "m1"), fact("90", "2026-04-01T00:00:00Z", null, "m2")];
    const page = renderFactsPage({ subject: "lifter:ana", predicate: "top_set.weight_kg", facts, full: false, now: NOW }, signedIn);
    const path = /<path class="step" d="([^"]+)"/.exec(page)![1]!;
    // Every horizontal run goes left to right: nothing is drawn back from a start in the future.
    const runs = [...path.matchAll(/[ML]([\d.]+),[\d.]+ H([\d.-]+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
    expect(runs).toHaveLength(2);
    for (const [from, to] of runs) expect(to).toBeGreaterThanOrEqual(from!);
    expect(page).toMatch(/<circle class="point" [^>]*data-value="80"/);
    expect(page).toMatch(/<circle class="point superseded" [^>]*data-value="90"/);
    expect(page).toContain("(upcoming)");
    expect(page).toMatch(/80 <span class="tag good">current<\/span>/);
    expect(page).toMatch(/90 <span class="tag">upcoming<\/span>/);
  });
});
