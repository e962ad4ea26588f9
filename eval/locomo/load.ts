import { memoryServices } from "@3ngram/proto/memory/v1";
import type { CallOptions, Peer } from "@3ngram/rpc";
import type { memoryContracts } from "@3ngram/schema";
import type { FixtureMemory } from "../retrieval/fixture.js";
import { mapInFlight } from "../retrieval/pools.js";

/**
 * Remembers each memory through the memory service's gRPC API, in the public shapes (as the
 * gateway writes). One lane per scope, all lanes at once (LoCoMo: five writes in flight, which
 * keep the model's workers busy while PostgreSQL commits): within a scope the memories are written
 * in order, one at a time, so the order of their recorded times, which the recency feature turns
 * into the tie-break between equal lexical scores, is the same on every run. How lanes interleave
 * does not matter, since every search is confined to one scope.
 *
 * Answers the fixture-id → memory-id map; fails when any memory was stored without its embedding
 * (`embedded: "pending"`), which would make the numbers depend on timing. Memories that revise
 * others are eval/retrieval loadMemories' job.
 */
export async function rememberAll(
  memory: Peer<typeof memoryServices, typeof memoryContracts>,
  as: CallOptions,
  memories: readonly FixtureMemory[],
): Promise<Map<string, string>> {
  const calls = memory.memories;
  const lanes = new Map<string, FixtureMemory[]>();
  for (const m of memories) {
    if (!lanes.has(m.scope)) lanes.set(m.scope, []);
    lanes.get(m.scope)!.push(m);
  }
  const stored = await mapInFlight([...lanes.values()], lanes.size, async (lane) => {
    const ids: Array<[string, string]> = [];
    for (const m of lane) {
      if (m.revises) throw new Error(`${m.id}: rememberAll does not revise`);
      const response = await calls.remember({ memoryType: m.type, topic: m.topic, content: m.content, scope: m.scope, tags: m.tags ?? [] }, as);
      if (!response.memory) throw new Error(`${m.id}: the memory service answered without a memory`);
      if (response.embedded !== "done") throw new Error(`${m.id}: stored without an embedding (${response.embedded})`);
      ids.push([m.id, response.memory.id]);
    }
    return ids;
  });
  return new Map(stored.flat());
}
