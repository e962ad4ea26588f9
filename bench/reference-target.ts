/**
 * The official reference memory server (@modelcontextprotocol/server-memory) as a benchmark target,
 * run the way its users run it: its own bin over stdio with MEMORY_FILE_PATH pointing at a JSONL
 * file (a temporary one here), driven by the official MCP client.
 *
 * The workload maps onto its knowledge-graph tools like this: a memory is one entity (named
 * `memory-<n>`, entityType = the memory type) whose one observation is "topic: content", created
 * with one create_entities call; search is search_nodes with the same query, its entities taken in
 * the order returned (it does not rank: a case-insensitive substring test in file order). It has no
 * chronological listing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { processRssMb, type Target } from "./workload.js";

const ENTITY = /^memory-(\d+)$/;

export async function startReferenceTarget(): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), "3ngram-bench-reference-"));
  const bin = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-memory/dist/index.js");
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin],
    env: { PATH: process.env.PATH ?? "", MEMORY_FILE_PATH: join(dir, "memory.jsonl") },
    stderr: "pipe",
  });
  const client = new Client({ name: "3ngram-bench", version: "1.0.0" });
  await client.connect(transport);
  const pid = transport.pid!;
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
    return result.structuredContent as Record<string, unknown>;
  };
  return {
    name: "reference server-memory",
    async remember(memory) {
      await call("create_entities", {
        entities: [{ name: `memory-${memory.index}`, entityType: memory.memoryType, observations: [`${memory.topic}: ${memory.content}`] }],
      });
    },
    async search(query, limit) {
      const out = (await call("search_nodes", { query })) as { entities: Array<{ name: string }> };
      return out.entities.slice(0, limit).map((e) => Number(ENTITY.exec(e.name)?.[1] ?? -1));
    },
    listChronological: null,
    rssMb: () => processRssMb(pid),
    async close() {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
