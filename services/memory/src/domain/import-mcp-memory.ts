/**
 * Reads the reference MCP memory server's knowledge graph (its JSONL file: one entity or relation
 * per line) as archive records, so the rest of the import treats them like any other archive:
 *
 *   entity   {type:"entity", name, entityType, observations[]}  → one `fact` memory per observation
 *            (topic = entity name, content = the observation, tags = [entityType]),
 *            key mcp:<name>:<index>
 *   relation {type:"relation", from, to, relationType}          → one fact (subject = from,
 *            predicate = relationType, value = to), key mcp-rel:<from>:<relationType>:<to>
 *
 * Keys are stable, so importing the same file again skips what is already there.
 */
import { mcpMemoryLineSchema, parseInput } from "@3ngram/schema";
import { boundedKey } from "./import-keys.js";

function mcpEntityKey(name: string, index: number): string {
  return boundedKey("mcp", [name, String(index)]);
}

function mcpRelationKey(from: string, relationType: string, to: string): string {
  return boundedKey("mcp-rel", [from, relationType, to]);
}

/**
 * One parsed JSONL value → the archive records it stands for, validated afterwards record by
 * record like any archive line. Throws AppError invalid_input naming the field when the value is
 * neither an entity nor a relation of that format.
 */
export function recordsFromMcpLine(value: unknown): Array<Record<string, unknown>> {
  const line = parseInput(mcpMemoryLineSchema, value);
  if (line.type === "entity") {
    return line.observations.map((observation, index) => ({
      kind: "memory",
      key: mcpEntityKey(line.name, index),
      memoryType: "fact",
      topic: line.name,
      content: observation,
      tags: [line.entityType],
    }));
  }
  return [
    {
      kind: "fact",
      key: mcpRelationKey(line.from, line.relationType, line.to),
      subject: line.from,
      predicate: line.relationType,
      value: line.to,
    },
  ];
}
