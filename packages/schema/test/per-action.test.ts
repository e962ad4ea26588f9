import { describe, expect, it } from "vitest";
import { z } from "zod";
import { configureScopeInputSchema, reviewProposalsInputSchema } from "../src/index.js";
import { selectorSchema } from "../src/orientation.js";
import { perActionInput } from "../src/per-action.js";

const advertised = (schema: z.ZodType) => schema["~standard"].jsonSchema.input({ target: "draft-2020-12" }) as Record<string, unknown>;
const issues = (schema: z.ZodType, value: unknown) => (schema.safeParse(value).error?.issues ?? []).map((i) => [i.path.join("."), i.message]);

describe("perActionInput", () => {
  const id = z.string().describe("Which one.");
  const schema = perActionInput("op", [
    z.strictObject({ op: z.literal("get"), id, limit: z.int().min(1).default(5) }),
    z.strictObject({ op: z.literal("put"), id, value: z.string() }),
  ]);

  it("advertises one flat closed object: the key an enum, every other field optional and described", () => {
    expect(advertised(schema)).toEqual({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        op: { type: "string", enum: ["get", "put"] },
        id: { type: "string", description: 'Which one. With op "get", "put".' },
        limit: { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER, default: 5, description: 'With op "get".' },
        value: { type: "string", description: 'With op "put".' },
      },
      required: ["op"],
      additionalProperties: false,
    });
  });

  it("parses to the chosen variant, defaults applied", () => {
    expect(schema.parse({ op: "get", id: "a" })).toEqual({ op: "get", id: "a", limit: 5 });
    expect(schema.parse({ op: "put", id: "a", value: "v" })).toEqual({ op: "put", id: "a", value: "v" });
  });

  it("names a field the action does not take, one it lacks, and keys nobody takes", () => {
    expect(issues(schema, { op: "get", id: "a", value: "v" })).toEqual([["value", 'not accepted with op "get"']]);
    expect(issues(schema, { op: "put", id: "a" })).toEqual([["value", 'required with op "put"']]);
    expect(issues(schema, { op: "get", id: "a", bogus: 1 })).toEqual([["", 'Unrecognized key: "bogus"']]);
    expect(issues(schema, { op: "delete" })[0]?.[0]).toBe("op");
  });

  it("refuses two actions that define one field differently", () => {
    expect(() => perActionInput("op", [z.strictObject({ op: z.literal("a"), x: z.string() }), z.strictObject({ op: z.literal("b"), x: z.int() })])).toThrow(
      /field x/,
    );
  });

  it("keeps the variants' refinements", () => {
    expect(issues(configureScopeInputSchema, { action: "set_retrieval_default", mode: "default" })).toEqual([
      ["scope", "mode default needs a scope; off and require take none"],
    ]);
    expect(configureScopeInputSchema.parse({ action: "set_retrieval_default", mode: "off" })).toEqual({
      action: "set_retrieval_default",
      mode: "off",
      scope: null,
    });
  });

  it("shapes every per-action input of the surface, nested ones included", () => {
    for (const s of [configureScopeInputSchema, reviewProposalsInputSchema, selectorSchema]) {
      const json = advertised(s);
      expect(json).toMatchObject({ type: "object", additionalProperties: false });
      expect(json).not.toHaveProperty("oneOf");
    }
    expect(issues(selectorSchema, { kind: "project" })).toEqual([["project", 'required with kind "project"']]);
  });
});
