/**
 * What the model-change scenarios share (distributed and standalone): notes that each hold a
 * made-up word no other note holds, written through REST, and the re-embedding progress that
 * describe_environment reports.
 */

/** A made-up word only memory `i` holds (letters only, so the tokeniser keeps it whole). */
export const rareWord = (i: number) => `zor${[...i.toString(26)].map((c) => String.fromCharCode(97 + parseInt(c, 26))).join("")}vel`;

/** describe_environment's stats.embeddings. */
export interface EmbeddingProgress {
  model: string;
  dimensions: number;
  embedded: number;
  pending: number;
}

/** What the scenarios read of an MCP search answer. */
export interface SearchOut {
  hits: Array<{ id: string }>;
  coverage: { abstained: boolean; legs: Array<{ leg: string; candidates: number }> };
}

/** Writes `count` notes through REST, ten at a time; answers their ids in order. */
export async function writeRareWordNotes(baseUrl: string, apiKey: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, count - i) }, async (_, j) => {
        const res = await fetch(`${baseUrl}/api/v1/memories`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
          body: JSON.stringify({ memoryType: "note", topic: `note ${i + j}`, content: `The ${rareWord(i + j)} project keeps its notes here.` }),
        });
        if (res.status !== 201) throw new Error(`writing note ${i + j}: HTTP ${res.status}`);
        return ((await res.json()) as { memory: { id: string } }).memory.id;
      }),
    );
    ids.push(...batch);
  }
  return ids;
}

export async function embeddingProgress(baseUrl: string, apiKey: string): Promise<EmbeddingProgress> {
  const res = await fetch(`${baseUrl}/api/v1/environment`, { headers: { authorization: `Bearer ${apiKey}` } });
  return ((await res.json()) as { stats: { embeddings: EmbeddingProgress } }).stats.embeddings;
}
