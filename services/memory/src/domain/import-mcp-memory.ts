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
import { createHash } from "node:crypto";
import { MAX_IMPORT_KEY_LENGTH, mcpMemoryLineSchema, parseInput } from "@3ngram/schema";

/** `%` and `:` are escaped inside key parts, so a name holding a colon cannot collide with another key. */
function keyPart(value: string): string {
  return value.replaceAll("%", "%25").replaceAll(":", "%3A");
}

/** The readable key when it fits the key bound, else a digest of it under the same prefix. */
function boundedKey(prefix: string, parts: readonly string[]): string {
  const key = `${prefix}:${parts.map(keyPart).join(":")}`;
  if (key.length <= MAX_IMPORT_KEY_LENGTH) return key;
  return `${prefix}:sha256:${createHash("sha256").update(key).digest("hex")}`;
}

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
