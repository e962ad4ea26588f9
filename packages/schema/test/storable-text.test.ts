/**
 * The one place NUL and unpaired surrogates are refused: every string a client can send, in every
 * input schema of this package, carries the storableText check (or is a UUID or timestamp, whose
 * formats cannot hold either). Input schemas are found by name, so a new one is covered too.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { zodNodes } from "../../../test/support/zod-nodes.js";
import { UNSTORABLE_TEXT_MESSAGE, isStorableText, rememberInputSchema } from "../src/index.js";

/** Exported names of the shapes clients (and peers) send: tool inputs, REST queries and bodies, archive lines, OAuth metadata. */
const INPUT_NAME =
  /(InputSchema|QuerySchema|BodySchema|ArgsSchema|ArgSchema|LineSchema|MetadataSchema|DocumentSchema|^archive\w+Schema|^mcp\w+Schema|^new\w+Schema)$/;
const SAFE_FORMATS = new Set(["uuid", "datetime"]);

/** Paths of every string node under `schema` that lacks the check. */
function unchecked(schema: unknown, name: string): string[] {
  const checked = (def: Record<string, unknown>) =>
    (typeof def.format === "string" && SAFE_FORMATS.has(def.format)) ||
    ((def.checks as { _zod: { def: { fn?: unknown } } }[] | undefined) ?? []).some((c) => c._zod.def.fn === isStorableText);
  return zodNodes(schema, name)
    .filter(({ def }) => def.type === "string" && !checked(def))
    .map(({ path }) => path);
}

/** Every module's exports, not only the index's: a schema the package keeps to itself is still sent by someone. */
const modules = (import.meta as unknown as { glob(pattern: string, options: { eager: true }): Record<string, Record<string, unknown>> }).glob("../src/*.ts", {
  eager: true,
});
const schemas = Object.fromEntries(Object.values(modules).flatMap((exports) => Object.entries(exports)));

describe("storable text", () => {
  it("is refused in every client string of every input schema", () => {
    const inputs = Object.entries(schemas).filter(([name, value]) => INPUT_NAME.test(name) && !name.includes("Output") && value instanceof z.ZodType);
    expect(inputs.length).toBeGreaterThan(25);
    expect(inputs.flatMap(([name, schema]) => unchecked(schema, name))).toEqual([]);
  });

  it("tells NUL and half surrogate pairs from text, emoji included", () => {
    for (const bad of ["\u0000", "a\u0000", "\ud800", "x\ud83d", "\ude00y", "\udc00\ud800"]) expect(isStorableText(bad), JSON.stringify(bad)).toBe(false);
    for (const good of ["", "plain", "😀", "\ud83d\ude00 paired", "tab\tand\nnewline", "\u202e\ufeff"])
      expect(isStorableText(good), JSON.stringify(good)).toBe(true);
  });

  it("names the field and stops that field's other checks", () => {
    const result = rememberInputSchema.safeParse({ memoryType: "note", topic: "\u0000", content: "ok" });
    expect(result.success).toBe(false);
    expect(result.error?.issues).toEqual([expect.objectContaining({ path: ["topic"], message: UNSTORABLE_TEXT_MESSAGE })]);
  });
});
