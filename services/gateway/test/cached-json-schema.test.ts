import { describe, expect, it } from "vitest";
import { z } from "zod";
import { cachedJsonSchema } from "../src/mcp/cached-json-schema.js";

const schema = z.strictObject({ query: z.string().min(1), limit: z.number().int().max(25).default(5) });

describe("cachedJsonSchema", () => {
  it("answers one wrapper per schema and converts each direction and target once", () => {
    const wrapper = cachedJsonSchema(schema);
    expect(cachedJsonSchema(schema)).toBe(wrapper);
    const input = wrapper["~standard"].jsonSchema.input({ target: "draft-2020-12" });
    expect(wrapper["~standard"].jsonSchema.input({ target: "draft-2020-12" })).toBe(input);
    expect(input).toEqual(z.toJSONSchema(schema, { target: "draft-2020-12", io: "input" }));
    const output = wrapper["~standard"].jsonSchema.output({ target: "draft-2020-12" });
    expect(output).not.toBe(input);
    expect(output).toEqual(z.toJSONSchema(schema, { target: "draft-2020-12", io: "output" }));
    expect(wrapper["~standard"].jsonSchema.input({ target: "draft-07" })).not.toBe(input);
  });

  it("validates with the zod schema itself", async () => {
    const { validate } = cachedJsonSchema(schema)["~standard"];
    expect(await validate({ query: "x" })).toEqual({ value: { query: "x", limit: 5 } });
    const refused = await validate({ query: "", extra: 1 });
    expect("issues" in refused && refused.issues?.map((i) => i.path?.[0])).toEqual(["query", undefined]);
  });
});
