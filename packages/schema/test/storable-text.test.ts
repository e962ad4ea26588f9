/**
 * The one place NUL and unpaired surrogates are refused: every string a client can send, in every
 * input schema of this package, carries the storableText check (or is a UUID or timestamp, whose
 * formats cannot hold either). Input schemas are found by name, so a new one is covered too.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as schemas from "../src/index.js";
import { UNSTORABLE_TEXT_MESSAGE, isStorableText, rememberInputSchema } from "../src/index.js";

/** Exported names of the shapes clients (and peers) send: tool inputs, REST queries and bodies, archive lines, OAuth metadata. */
const INPUT_NAME = /(InputSchema|QuerySchema|BodySchema|ArgsSchema|ArgSchema|LineSchema|MetadataSchema|DocumentSchema|^archive\w+Schema|^mcp\w+Schema|^new\w+Schema)$/;
const SAFE_FORMATS = new Set(["uuid", "datetime"]);

/** Paths of every string node under `schema` that lacks the check. */
function unchecked(schema: unknown, path: string, seen = new Set<unknown>()): string[] {
  if (schema === null || typeof schema !== "object" || seen.has(schema)) return [];
  seen.add(schema);
  const def = (schema as { _zod?: { def?: Record<string, unknown> } })._zod?.def;
  if (def === undefined) return [];
  const walk = (child: unknown, at: string) => unchecked(child, at, seen);
  switch (def.type) {
    case "string": {
      if (typeof def.format === "string" && SAFE_FORMATS.has(def.format)) return [];
      const checks = (def.checks as { _zod: { def: { fn?: unknown } } }[] | undefined) ?? [];
      return checks.some((c) => c._zod.def.fn === isStorableText) ? [] : [path];
    }
    case "object":
      return Object.entries(def.shape as Record<string, unknown>).flatMap(([key, child]) => walk(child, `${path}.${key}`));
    case "array":
      return walk(def.element, `${path}[]`);
    case "union":
      return (def.options as unknown[]).flatMap((o, i) => walk(o, `${path}|${i}`));
    case "record":
      return [...walk(def.keyType, `${path}{key}`), ...walk(def.valueType, `${path}{}`)];
    case "pipe":
      return [...walk(def.in, path), ...walk(def.out, path)];
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "readonly":
    case "catch":
    case "nonoptional":
      return walk(def.innerType, path);
    case "lazy":
      return walk((def.getter as () => unknown)(), path);
    default:
      return [];
  }
}

describe("storable text", () => {
  it("is refused in every client string of every input schema", () => {
    const inputs = Object.entries(schemas).filter(([name, value]) => INPUT_NAME.test(name) && !name.includes("Output") && value instanceof z.ZodType);
    expect(inputs.length).toBeGreaterThan(25);
    expect(inputs.flatMap(([name, schema]) => unchecked(schema, name))).toEqual([]);
  });

  it("tells NUL and half surrogate pairs from text, emoji included", () => {
    for (const bad of ["\u0000", "a\u0000", "\ud800", "x\ud83d", "\ude00y", "\udc00\ud800"]) expect(isStorableText(bad), JSON.stringify(bad)).toBe(false);
    for (const good of ["", "plain", "😀", "\ud83d\ude00 paired", "tab\tand\nnewline", "\u202e\ufeff"]) expect(isStorableText(good), JSON.stringify(good)).toBe(true);
  });

  it("names the field and stops that field's other checks", () => {
    const result = rememberInputSchema.safeParse({ memoryType: "note", topic: "\u0000", content: "ok" });
    expect(result.success).toBe(false);
    expect(result.error?.issues).toEqual([expect.objectContaining({ path: ["topic"], message: UNSTORABLE_TEXT_MESSAGE })]);
  });
});
