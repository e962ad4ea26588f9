/** Reads several UI pages share, through the same mappings as the tools and REST routes. */
import type { CallerIdentity } from "@3ngram/rpc";
import { getMemoriesInputSchema, parseInput, type FacetsOutput, type MemoryRecord } from "@3ngram/schema";
import type { MemoryPeer } from "../../clients/memory.js";

export async function readMemories(memory: MemoryPeer, ids: string[], identity: CallerIdentity, maxContentChars?: number): Promise<MemoryRecord[]> {
  const input = parseInput(getMemoriesInputSchema, { ids: [...new Set(ids)], ...(maxContentChars !== undefined ? { maxContentChars } : {}) });
  return (await memory.memories.getMemories(input, { identity })).memories;
}

/** The tenant's live scopes and projects, for the filter menus. */
export async function readFacets(memory: MemoryPeer, identity: CallerIdentity): Promise<FacetsOutput> {
  return memory.memories.getFacets({}, { identity });
}
