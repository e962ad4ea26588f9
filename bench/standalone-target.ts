/**
 * 3ngram standalone as a benchmark target: the real `make run` server (standalone/dist/main.js)
 * as a child process on a temporary data directory with the bundled model, driven through the
 * official MCP client over Streamable HTTP exactly as a user's agent drives it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { STANDALONE_MALLOC_ARENA_MAX, STANDALONE_MALLOC_MMAP_THRESHOLD, STANDALONE_MAX_SEMI_SPACE_MB } from "@3ngram/standalone";
import { connectMcp } from "../test/support/mcp.js";
import { startStandalone } from "../test/support/standalone.js";
import { processRssMb, type GeneratedMemory, type Target } from "./workload.js";

export interface StandaloneTarget extends Target {
  mcpUrl: string;
  apiKey: string;
  databaseUrl: string;
  dataDir: string;
}

/**
 * keepDataDir: close() leaves the data directory for the caller (who removes it). dataDir: start on
 * a directory an earlier run kept (its memories are recognised by their content, see `search`).
 */
export async function startStandaloneTarget(
  env: Record<string, string> = {},
  options: { keepDataDir?: boolean; dataDir?: string; corpus?: readonly GeneratedMemory[] } = {},
): Promise<StandaloneTarget> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "3ngram-bench-standalone-"));
  // One client making thousands of calls a minute: the per-user and per-key budgets would stop it.
  const unlimited = { RATE_LIMIT_IP_PER_MINUTE: "1000000", RATE_LIMIT_USER_PER_MINUTE: "1000000", RATE_LIMIT_KEY_PER_MINUTE: "1000000" };
  const server = await startStandalone(
    dataDir,
    {
      // What `make run` puts in the environment (docs/adr/0036), so the bench measures what a user
      // gets on any Node.js; MALLOC_ARENA_MAX or MALLOC_MMAP_THRESHOLD_ in the bench's own environment
      // replaces it (0: glibc's default arenas).
      MALLOC_ARENA_MAX: STANDALONE_MALLOC_ARENA_MAX,
      MALLOC_MMAP_THRESHOLD_: STANDALONE_MALLOC_MMAP_THRESHOLD,
      // `make run` passes the young generation's cap on node's command line; the spawned server gets it this way.
      NODE_OPTIONS: `--max-semi-space-size=${STANDALONE_MAX_SEMI_SPACE_MB}`,
      ...unlimited,
      ...env,
    },
    120_000,
  );
  const { proc, mcpUrl, apiKey, databaseUrl } = server;
  const mcp = await connectMcp(mcpUrl, apiKey, { modern: true });
  const indexOf = new Map<string, number>();
  // On a kept directory the ids were handed out to another run: a hit is known by its content,
  // which comes whole (the bench's memories are far shorter than an excerpt).
  const indexOfContent = new Map((options.corpus ?? []).map((m) => [m.content, m.index]));
  const pid = proc.child.pid!;
  return {
    name: "3ngram standalone",
    mcpUrl,
    apiKey,
    databaseUrl,
    dataDir,
    async remember(memory) {
      const out = await mcp.call<{ memory: { id: string } }>("remember", { memoryType: memory.memoryType, topic: memory.topic, content: memory.content });
      indexOf.set(out.memory.id, memory.index);
    },
    async search(query, limit) {
      const out = await mcp.call<{ hits: Array<{ id: string; content: string }> }>("search", { query, limit });
      return out.hits.map((h) => indexOf.get(h.id) ?? indexOfContent.get(h.content) ?? -1);
    },
    async listChronological(memoryType) {
      await mcp.call("search", { order: "chronological", memoryType, limit: 25 });
    },
    rssMb: () => processRssMb(pid),
    async close() {
      await mcp.close();
      const code = await proc.stop();
      if (!options.keepDataDir && options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
      if (code !== 0) throw new Error(`standalone exited with ${code ?? `signal ${proc.child.signalCode}`}:\n${proc.output().slice(-4000)}`);
    },
  };
}
