/** Reads several UI pages share, through the same mappings as the tools and REST routes. */
import type { CallerIdentity } from "@3ngram/rpc";
import { getMemoriesInputSchema, parseInput, type FacetsOutput, type MemoryRecord } from "@3ngram/schema";
import { memoryApi, type MemoryClient } from "../../clients/memory.js";

export async function readMemories(memory: MemoryClient, ids: string[], identity: CallerIdentity, maxContentChars?: number): Promise<MemoryRecord[]> {
  const input = parseInput(getMemoriesInputSchema, { ids: [...new Set(ids)], ...(maxContentChars !== undefined ? { maxContentChars } : {}) });
  return (await memoryApi(memory).memories.getMemories(input, { identity })).memories;
}

/** The tenant's live scopes and projects, for the filter menus. */
export async function readFacets(memory: MemoryClient, identity: CallerIdentity): Promise<FacetsOutput> {
  return memoryApi(memory).memories.getFacets({}, { identity });
}
