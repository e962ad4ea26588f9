/**
 * Mappings for the MCP surface's non-tool primitives: the memory resource body and the scope
 * names completion offers. Both are plain reads through the memory service.
 */
import { AppError } from "@3ngram/errors";
import type { ReadMemoryResponse } from "@3ngram/proto/memory/v1";
import { memoryResourceSchema, type MemoryResource } from "@3ngram/schema";
import { isoTime } from "./timestamps.js";

/** The immutable projection of one memory, with its whole stored content. */
export function toMemoryResource(response: ReadMemoryResponse): MemoryResource {
  const memory = response.memory;
  if (memory === undefined) throw new AppError("internal_error", "memory service returned no memory");
  if (memory.truncated) throw new AppError("internal_error", "memory service cut a full read");
  return memoryResourceSchema.parse({
    id: memory.id,
    memoryType: memory.memoryType,
    topic: memory.topic,
    content: memory.content,
    contentLength: memory.contentLength,
    scope: memory.scope,
    project: memory.project ?? null,
    recordedAt: isoTime(memory.recordedAt, "recorded_at"),
  });
}

/** The most completion values the protocol lets one answer carry. */
const MAX_COMPLETION_VALUES = 100;

/** Scope names starting with what the user typed (case-insensitive), in the service's order, at most 100. */
export function completeScopes(scopes: readonly string[], typed: string): string[] {
  const prefix = typed.trim().toLowerCase();
  return scopes.filter((s) => s.toLowerCase().startsWith(prefix)).slice(0, MAX_COMPLETION_VALUES);
}
