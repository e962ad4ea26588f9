/**
 * How a basic-memory note is read, line by line, on the shapes basic-memory's own parser tells
 * apart: observations and their look-alikes (task items, time codes, links), explicit relations
 * and sentences that merely hold a link, code and quotes, and where a note's title comes from.
 */
import { describe, expect, it } from "vitest";
import { parseNote } from "../src/domain/basic-memory-note.js";
import { recordsFromBasicMemoryNote } from "../src/domain/import-basic-memory.js";

describe("a basic-memory note", () => {
  it("reads observations, relations and prose the way basic-memory does", () => {
    const note = parseNote(
      [
        "---",
        "title: Atlas",
        "tags: [one, two]",
        "---",
        "Intro text.",
        "",
        "## Observations",
        "- [decision] Use PostgreSQL #db#storage (after review)",
        "- A tagged item without category #loose",
        "- [ ] an open task #todo",
        "- [x] a done task",
        "- [00:01:02] a transcript line",
        "- [link](https://example.com)",
        "- a plain item",
        "> - [fact] quoted, so prose",
        "```",
        "- [fact] in code, so prose",
        "```",
        "## Relations",
        "- implements [[Spec]]",
        '- "depends on" [[Queue]] (for jobs)',
        "- see [[Other]] for more",
        "- relates_to [[Spec]] and more text",
      ].join("\n"),
    );
    expect(note.frontMatter).toEqual({ title: "Atlas", tags: ["one", "two"] });
    expect(note.observations).toEqual([
      { category: "decision", text: "Use PostgreSQL #db#storage (after review)", tags: ["db", "storage"] },
      { category: null, text: "A tagged item without category #loose", tags: ["loose"] },
    ]);
    expect(note.relations).toEqual([
      { type: "implements", target: "Spec" },
      { type: "depends on", target: "Queue" },
    ]);
    expect(note.prose.split("\n")).toEqual([
      "Intro text.",
      "",
      "- [ ] an open task #todo",
      "- [x] a done task",
      "- [00:01:02] a transcript line",
      "- [link](https://example.com)",
      "- a plain item",
      "> - [fact] quoted, so prose",
      "```",
      "- [fact] in code, so prose",
      "```",
      "- see [[Other]] for more",
      "- relates_to [[Spec]] and more text",
    ]);
  });

  it("has no prose when only headings are left, and refuses front matter it cannot read", () => {
    expect(parseNote("# Only A Heading\n## Observations\n- [fact] x").prose).toBe("");
    expect(() => parseNote("---\ntitle: [unclosed\n---\n")).toThrow(/^content: the front matter is not valid YAML$/);
    expect(() => parseNote("---\ntitle: x\n")).toThrow(/no closing ---/);
    expect(() => parseNote("---\n- a\n- b\n---\n")).toThrow(/not a mapping/);
  });

  it("takes the title from front matter, else the first heading, else the file name, and keys stay the same for the same text", () => {
    const topics = [
      { path: "a/b.md", content: "---\ntitle: From Front Matter\n---\n- [fact] one" },
      { path: "a/b.md", content: "# From Heading\n- [fact] one" },
      { path: "a/From File.md", content: "- [fact] one" },
    ].map((line) => recordsFromBasicMemoryNote(line)[0]!.topic);
    expect(topics).toEqual(["From Front Matter", "From Heading", "From File"]);
    const once = recordsFromBasicMemoryNote({ path: "n.md", content: "- [fact] one\n- [fact] two" });
    const moved = recordsFromBasicMemoryNote({ path: "n.md", content: "- [fact] zero\n- [fact] one\n- [fact] two" });
    expect(moved.slice(1).map((r) => r.key)).toEqual(once.map((r) => r.key));
  });

  it("types by category and note type where they name ours, and tags with the rest", () => {
    const records = recordsFromBasicMemoryNote({
      path: "team/People.md",
      content: "---\ntype: person\ntags: alpha, beta\n---\nAbout the team.\n- [Preference] Short meetings #meetings\n- [idea] A retro every month",
      project: "atlas",
    });
    expect(records.map((r) => [r.memoryType, r.tags, r.project])).toEqual([
      ["note", ["alpha", "beta", "basic-memory-folder:team", "person"], "atlas"],
      ["preference", ["meetings", "alpha", "beta", "basic-memory-folder:team"], "atlas"],
      ["fact", ["idea", "alpha", "beta", "basic-memory-folder:team"], "atlas"],
    ]);
  });
});
