/**
 * Every tool on the live surface has an input schema the model APIs accept (model-api-rules.ts):
 * a plain object root, and nested schemas within the strictest rules that can be checked offline.
 * The rules themselves are checked against the shapes that broke real clients, so a weakened rule
 * fails here too.
 */
import { describe, expect, it } from "vitest";
import { modelApiProblems } from "./model-api-rules.js";
import { readLiveSurface } from "./live-surface.js";

describe("the advertised input schemas, as the model APIs see them", () => {
  it("give every tool a plain object root and nested schemas every model API takes", async () => {
    const { tools } = await readLiveSurface();
    expect(tools).toHaveLength(11);
    const problems = tools.flatMap((tool) => modelApiProblems(tool).map((p) => `${tool.name} ${p}`));
    expect(problems).toEqual([]);
  });
});

describe("the model-API rules", () => {
  const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    type: "object",
    properties,
    additionalProperties: false,
    ...extra,
  });
  const problemsOf = (inputSchema: unknown, name = "tool") => modelApiProblems({ name, inputSchema });

  it("accept a flat object with an action enum and optional fields", () => {
    expect(problemsOf(object({ action: { type: "string", enum: ["list", "create"] }, name: { type: "string" } }, { required: ["action"] }))).toEqual([]);
  });

  it("refuse a composed root, the shape a discriminated union becomes", () => {
    const union = { type: "object", oneOf: [object({ action: { type: "string", const: "list" } })] };
    expect(problemsOf(union)).toEqual(
      expect.arrayContaining(["$: no oneOf at the root", "$: must declare properties", "$: additionalProperties must be false"]),
    );
    expect(problemsOf({ ...object({}), anyOf: [] })).toContain("$: no anyOf at the root");
  });

  it("refuse the nested constructs the strictest APIs reject", () => {
    expect(problemsOf(object({ kind: { type: "string", const: "all" } }))).toContain("$.kind: no const");
    expect(problemsOf(object({ selector: { type: "object", oneOf: [] } }))).toEqual(
      expect.arrayContaining(["$.selector: no oneOf", "$.selector: an object needs properties"]),
    );
    expect(problemsOf(object({ scope: { type: ["string", "null"] } }))).toContain("$.scope: type must be one name, not a list");
    expect(problemsOf(object({ tags: { type: "array" } }))).toContain("$.tags: an array needs items");
    expect(problemsOf(object({ limit: { type: "integer", enum: [1, 2] } }))).toEqual(
      expect.arrayContaining(["$.limit: enum must list strings", '$.limit: an enum needs type "string"']),
    );
    expect(problemsOf(object({ anything: {} }))).toContain("$.anything: a property needs a type");
    expect(problemsOf(object({ ref: { type: "object", $ref: "#/$defs/x", properties: {} } }))).toContain("$.ref: no $ref");
    expect(problemsOf(object({ a: { type: "string" } }, { required: ["b"] }))).toContain("$: required names an undeclared b");
  });

  it("accept a nested anyOf of typed branches, which every API takes below the root", () => {
    expect(problemsOf(object({ value: { anyOf: [{ type: "string" }, { type: "integer" }] } }))).toEqual([]);
  });

  it("refuse tool names some API cannot call", () => {
    expect(problemsOf(object({}), "get.facts")).toContain(`name: must match /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/`);
    expect(problemsOf(object({}), "9lives")).toHaveLength(1);
    expect(problemsOf(object({}), "x".repeat(65))).toHaveLength(1);
  });
});
