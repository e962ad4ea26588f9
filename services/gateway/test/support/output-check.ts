/**
 * The one check of what a tool answers (the gateway does not re-parse outputs, ADR-0029 and 0040):
 * the structured content is exactly what the advertised output schema describes, read strictly
 * (an unknown key, a wrong type or a missing field is a problem), and parsing it changes nothing:
 * no default or transform would have filled or changed a value, and every object's keys are in
 * the schema's order, so the JSON text mirror is byte for byte the JSON of the parsed value.
 */
import type { z } from "zod";
import type { ToolResult } from "./mcp-client.js";

/** Every way `result` differs from what `schema` describes; empty when it is exactly that. */
export function outputProblems(schema: z.ZodType, result: ToolResult): string[] {
  if (result.isError) return [`an error result: ${result.content.map((c) => c.text ?? "").join(" ")}`];
  const structured = result.structuredContent;
  if (structured === undefined) return ["no structured content"];
  const text = result.content[0]?.text;
  const problems: string[] = [];
  if (result.content.length !== 1 || text !== JSON.stringify(structured)) problems.push("the text mirror is not the structured content's JSON");
  const parsed = schema.safeParse(structured);
  if (!parsed.success) return [...problems, ...parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)];
  if (JSON.stringify(parsed.data) !== JSON.stringify(structured)) problems.push("parsing changes it (a key out of the schema's order, or a value filled in)");
  return problems;
}
