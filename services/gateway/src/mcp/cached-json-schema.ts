import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import type { z } from "zod";

type Converter = StandardSchemaWithJSON["~standard"]["jsonSchema"];

const wrappers = new WeakMap<z.ZodType, StandardSchemaWithJSON>();

/**
 * The schema as the SDK takes it, with its JSON Schema form computed once per schema instead of
 * once per request. The endpoint builds a fresh McpServer for every request, and the SDK converts
 * a tool's input schema to JSON Schema on every tools/call (to look for Mcp-Param header
 * declarations) and every tools/list: ~0.8 ms of zod conversion per call at the search benchmark.
 * Validation still runs the zod schema itself; only the conversion is memoised, per target and
 * direction. The cached objects are shared, so nothing may mutate them (the SDK copies the root).
 */
export function cachedJsonSchema<T extends z.ZodType>(schema: T): StandardSchemaWithJSON<z.input<T>, z.output<T>> {
  const known = wrappers.get(schema);
  if (known) return known as StandardSchemaWithJSON<z.input<T>, z.output<T>>;
  const standard = schema["~standard"] as unknown as StandardSchemaWithJSON<z.input<T>, z.output<T>>["~standard"];
  const converted = new Map<string, Record<string, unknown>>();
  const memo =
    (io: "input" | "output"): Converter["input"] =>
    (options) => {
      const key = `${io}\u0000${options.target}`;
      let json = converted.get(key);
      if (json === undefined) {
        json = standard.jsonSchema[io](options);
        converted.set(key, json);
      }
      return json;
    };
  const wrapper: StandardSchemaWithJSON<z.input<T>, z.output<T>> = {
    "~standard": {
      version: 1,
      vendor: standard.vendor,
      validate: (value, options) => standard.validate(value, options),
      jsonSchema: { input: memo("input"), output: memo("output") },
      ...(standard.types ? { types: standard.types } : {}),
    },
  };
  wrappers.set(schema, wrapper as StandardSchemaWithJSON);
  return wrapper;
}
