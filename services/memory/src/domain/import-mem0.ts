/**
 * Reads mem0's memories (the items of its OSS `get_all` answer) as archive records, so the rest
 * of the import treats them like any other archive line:
 *
 *   {id, memory, metadata, user_id, agent_id, run_id, categories, created_at, …}
 *     → one memory: content = memory, memoryType = metadata.memory_type or metadata.type when
 *       that names one of ours, else fact; topic = metadata.topic, else the first category, else
 *       "mem0"; validFrom = created_at; tags = the source ids, categories and metadata.tags;
 *       key mem0:<id>
 *
 * A line holds one memory, or a whole `get_all` answer written compactly ({results: [...]} or a
 * bare array). mem0's user, agent and run ids partition its store but name nothing our scopes
 * know, so they become tags (mem0-user:<id>, …) and the memory lands in the default scope.
 */
import { AppError } from "@3ngram/errors";
import { MEMORY_TYPES, mem0RecordSchema, parseInput, type MemoryType } from "@3ngram/schema";
import { boundedKey } from "./import-keys.js";
import { importTags } from "./import-tags.js";

/** The topic of a memory whose source names none. */
const FALLBACK_TOPIC = "mem0";

/** The memories one parsed line stands for: each item of a get_all answer, or the line itself. */
export function mem0Items(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (typeof value === "object" && value !== null && Array.isArray((value as { results?: unknown }).results)) {
    return (value as { results: unknown[] }).results;
  }
  return [value];
}

/**
 * One mem0 memory → the archive memory record it becomes, validated afterwards like any archive
 * line. Throws AppError invalid_input naming the field when it is not a mem0 memory.
 */
export function recordFromMem0(value: unknown): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new AppError("invalid_input", "line: a mem0 memory is a JSON object", { field: "line" });
  }
  const m = parseInput(mem0RecordSchema, value);
  const metadata = m.metadata ?? {};
  const categories = m.categories ?? [];
  const record: Record<string, unknown> = {
    kind: "memory",
    key: boundedKey("mem0", [m.id]),
    memoryType: memoryTypeOf(metadata),
    topic: topicOf(metadata, categories),
    content: m.memory,
    tags: tagsOf(m, categories, metadata),
  };
  if (m.created_at !== undefined && m.created_at !== null) record.validFrom = m.created_at;
  return record;
}

function memoryTypeOf(metadata: Record<string, unknown>): MemoryType {
  for (const key of ["memory_type", "type"]) {
    const named = metadata[key];
    if (typeof named !== "string") continue;
    const type = MEMORY_TYPES.find((t) => t === named.trim().toLowerCase());
    if (type !== undefined) return type;
  }
  return "fact";
}

function topicOf(metadata: Record<string, unknown>, categories: readonly string[]): string {
  const candidates = [metadata.topic, ...categories];
  for (const candidate of candidates) {
    if (typeof candidate === "string" && candidate.trim() !== "") return candidate;
  }
  return FALLBACK_TOPIC;
}

/**
 * Source ids first (they say whose memory it was, so they are the last to be cut), then categories
 * and metadata tags.
 */
function tagsOf(
  m: { user_id?: string | null; agent_id?: string | null; run_id?: string | null },
  categories: readonly string[],
  metadata: Record<string, unknown>,
): string[] {
  const sourceIds = [
    m.user_id ? `mem0-user:${m.user_id}` : undefined,
    m.agent_id ? `mem0-agent:${m.agent_id}` : undefined,
    m.run_id ? `mem0-run:${m.run_id}` : undefined,
  ];
  const metadataTags = Array.isArray(metadata.tags) ? metadata.tags : [];
  return importTags([...sourceIds, ...categories, ...metadataTags]);
}
