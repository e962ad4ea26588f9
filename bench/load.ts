/**
 * Mixed load through the gateway in distributed mode: the gateway, memory and search services as
 * separate processes (as in production, over loopback gRPC) against a fresh PostgreSQL database
 * and a Redis key prefix, driven by MCP clients (the official SDK) at rising concurrency. Each
 * virtual user runs its operations back to back: by default 80 % search and 20 % remember. Per
 * step it prints throughput, p50/p95/p99 per operation, errors, and RSS and CPU per service.
 *
 *   npm run bench:load                                   # concurrency 1,8,32; 60 s per step
 *   npm run bench:load -- --step-seconds 15 --concurrency 8,32
 *   npm run bench:load -- --writes 100                   # writes only (write throughput)
 *   npm run bench:load -- --embedder local               # the bundled model instead of hashing
 *   npm run bench:load -- --dimensions 512               # hashing vectors of 512 dimensions (default 384, the default model's)
 *   npm run bench:load -- --search-replicas 2 --memory-replicas 2
 *   npm run bench:load -- --seed 2000                    # memories stored before the first step
 *   npm run bench:load -- --surface rest                 # the same load through the REST API
 *   npm run bench:load -- --gateway-dist DIR             # another gateway build (a copy of a dist/), for before/after
 *   npm run bench:load -- --profile-gateway DIR          # the gateway process writes a V8 CPU profile into DIR on exit
 *   npm run bench:load -- --compare-gateway-dist DIR     # a second gateway process from another build beside the first, every
 *                                                        # other client on it: both see the same moments of a busy machine
 *
 * The consolidator is not started: the jobs writes leave in the outbox wait in Redis, which
 * is deleted at the end. CPU is the processes' user + system time over the step (all threads,
 * so embedding workers count), as a share of one core and per operation: on a shared machine the
 * CPU a process spends per operation moves much less than wall-clock latency does.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { performance } from "node:perf_hooks";
import { checkHealth } from "@3ngram/rpc";
import { createTestDatabase, deleteKeyPrefix, TEST_REDIS_URL, uniqueKeyPrefix } from "../test/support/database.js";
import { createTestKeys } from "../test/support/keys.js";
import { flagValue, hashingDimensions, percentiles } from "./stats.js";
import { connectMcp, type McpConnection } from "../test/support/mcp.js";
import { freePort, REPO_ROOT, startServiceProcess, waitFor, type ServiceProcess } from "../test/support/processes.js";
import { loadGatewayEnv, serviceEnv } from "../test/support/service-env.js";

const run = promisify(execFile);

const SUBJECTS = ["billing", "search", "auth", "deploy", "onboarding", "analytics", "mobile", "storage", "payments", "alerts"];
const OBJECTS = ["the retry policy", "the cache layer", "PostgreSQL", "the queue", "the gateway", "the nightly job", "feature flags", "rate limits"];
/** Clock ticks per second in /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

interface Options {
  concurrency: number[];
  stepSeconds: number;
  writesPercent: number;
  embedder: "hashing" | "local";
  /** The hashing embedder's vector size; the bundled model has its own. */
  dimensions: number;
  searchReplicas: number;
  memoryReplicas: number;
  seed: number;
  surface: "mcp" | "rest";
  gatewayScript: string;
  profileGatewayDir: string | undefined;
  compareGatewayScript: string | undefined;
}

interface Sample {
  op: "search" | "remember";
  /** Which gateway served it: 0, or 1 for the --compare-gateway-dist one. */
  gateway: number;
  ms: number;
  ok: boolean;
}

interface Usage {
  cpuTicks: number;
  rssMb: number;
}

function parseArgs(argv: readonly string[]): Options {
  const value = (flag: string) => flagValue(argv, flag);
  const int = (flag: string, fallback: number, min: number, max: number) => {
    const raw = value(flag);
    const n = raw === undefined ? fallback : Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${flag} must be a whole number from ${min} to ${max}`);
    return n;
  };
  const concurrency = (value("--concurrency") ?? "1,8,32").split(",").map(Number);
  if (concurrency.some((c) => !Number.isInteger(c) || c < 1 || c > 256)) throw new Error("--concurrency takes a list of levels from 1 to 256, e.g. 1,8,32");
  const embedder = value("--embedder") ?? "hashing";
  if (embedder !== "hashing" && embedder !== "local") throw new Error("--embedder is hashing or local");
  const dimensions = hashingDimensions(argv);
  if (embedder === "local" && value("--dimensions") !== undefined) throw new Error("--dimensions is for the hashing embedder; the model has its own");
  const surface = value("--surface") ?? "mcp";
  if (surface !== "mcp" && surface !== "rest") throw new Error("--surface is mcp or rest");
  return {
    concurrency,
    stepSeconds: int("--step-seconds", 60, 1, 3600),
    writesPercent: int("--writes", 20, 0, 100),
    embedder,
    dimensions,
    searchReplicas: int("--search-replicas", 1, 1, 8),
    memoryReplicas: int("--memory-replicas", 1, 1, 8),
    seed: int("--seed", 1000, 0, 1_000_000),
    surface,
    gatewayScript: `${value("--gateway-dist") ?? "services/gateway/dist"}/main.js`,
    profileGatewayDir: value("--profile-gateway"),
    compareGatewayScript: value("--compare-gateway-dist") === undefined ? undefined : `${value("--compare-gateway-dist")}/main.js`,
  };
}

/** CPU ticks used so far and resident memory now, from /proc (Linux). */
function usage(pid: number): Usage {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces) start at state; utime and stime are the 12th and 13th of those.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const cpuTicks = Number(fields[11]) + Number(fields[12]);
  const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return { cpuTicks, rssMb: rss ? Number(rss[1]) / 1024 : 0 };
}

/** PostgreSQL backends serving this database (their process titles name it). */
function postgresBackends(database: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(` ${database} `)) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** Summed CPU ticks of these processes (those that ended in the meantime count as 0). */
function ticksOf(pids: number[]): Map<number, number> {
  const ticks = new Map<number, number>();
  for (const pid of pids) {
    try {
      ticks.set(pid, usage(pid).cpuTicks);
    } catch {
      // Gone.
    }
  }
  return ticks;
}

/** Where operations go: an MCP client, or the REST API with an API key. */
type Client = ({ surface: "mcp"; mcp: McpConnection } | { surface: "rest"; baseUrl: string; apiKey: string }) & { gateway: number };

async function send(client: Client, op: Sample["op"], args: Record<string, unknown>): Promise<boolean> {
  if (client.surface === "mcp") {
    const result = await client.mcp.client.callTool({ name: op, arguments: args }, { timeout: 30_000 });
    return result.isError !== true;
  }
  const response = await fetch(`${client.baseUrl}${op === "remember" ? "/api/v1/memories" : "/api/v1/search"}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${client.apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify(args),
    signal: AbortSignal.timeout(30_000),
  });
  await response.arrayBuffer();
  return response.ok;
}

/** One operation; a unique query each time, so the query-embedding cache never answers for the model. */
async function operation(client: Client, op: Sample["op"], id: number, n: number): Promise<Sample> {
  const subject = SUBJECTS[(n + id) % SUBJECTS.length]!;
  const object = OBJECTS[(n * 3 + id) % OBJECTS.length]!;
  const args =
    op === "remember"
      ? {
          memoryType: "decision",
          topic: `${subject} ${object}`,
          content: `User ${id} op ${n}: the ${subject} team chose ${object} after review ${Date.now()}.`,
        }
      : { query: `what did the ${subject} team decide about ${object} ${id}-${n}`, limit: 5 };
  const started = performance.now();
  const ok = await send(client, op, args).catch(() => false);
  return { op, gateway: client.gateway, ms: performance.now() - started, ok };
}

/** One virtual user: its own MCP client, operations back to back until `until`. */
async function user(client: Client, id: number, writesPercent: number, until: number, samples: Sample[]): Promise<void> {
  for (let n = 1; performance.now() < until; n++) {
    // Deterministic mix: writesPercent of every 100 consecutive operations are writes.
    const op = (n * 37 + id * 11) % 100 < writesPercent ? "remember" : "search";
    samples.push(await operation(client, op, id, n));
  }
}

export async function main(argv: readonly string[]): Promise<number> {
  const options = parseArgs(argv);
  const db = await createTestDatabase("load");
  const prefix = uniqueKeyPrefix("load");
  const keys = await createTestKeys();
  const processes: ServiceProcess[] = [];
  const mcps: McpConnection[] = [];
  try {
    const ports = async (count: number) => Promise.all(Array.from({ length: count }, () => freePort()));
    const memoryPorts = await ports(options.memoryReplicas);
    const searchPorts = await ports(options.searchReplicas);
    const gatewayPort = await freePort();
    const target = (list: number[]) => (list.length === 1 ? `127.0.0.1:${list[0]}` : `ipv4:${list.map((p) => `127.0.0.1:${p}`).join(",")}`);
    const common = {
      ...serviceEnv({ databaseUrl: db.url, redisUrl: TEST_REDIS_URL, prefix, keys, memoryPort: memoryPorts[0]!, searchPort: searchPorts[0]! }),
      MEMORY_ADDR: target(memoryPorts),
      SEARCH_ADDR: target(searchPorts),
      EMBEDDINGS_PROVIDER: options.embedder,
      ...(options.embedder === "hashing" ? { EMBEDDINGS_DIMENSIONS: String(options.dimensions) } : {}),
      ...(process.env.EMBEDDINGS_WORKERS !== undefined ? { EMBEDDINGS_WORKERS: process.env.EMBEDDINGS_WORKERS } : {}),
      ...(process.env.EMBEDDINGS_LOCAL_MODEL !== undefined ? { EMBEDDINGS_LOCAL_MODEL: process.env.EMBEDDINGS_LOCAL_MODEL } : {}),
    };
    const startService = async (name: string, script: string, port: number) => {
      const proc = startServiceProcess(name, script, { ...common, GRPC_PORT: String(port) });
      processes.push(proc);
      await waitFor(`${name} serving`, async () => (await checkHealth(`127.0.0.1:${port}`)) === "SERVING", 120_000, proc);
      return proc;
    };
    // The first memory process migrates the fresh database before the others start.
    await startService("memory-1", "services/memory/dist/main.js", memoryPorts[0]!);
    await Promise.all([
      ...memoryPorts.slice(1).map((port, i) => startService(`memory-${i + 2}`, "services/memory/dist/main.js", port)),
      ...searchPorts.map((port, i) => startService(`search-${i + 1}`, "services/search/dist/main.js", port)),
    ]);
    const profile = options.profileGatewayDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${resolve(options.profileGatewayDir)}`];
    const gateway = startServiceProcess("gateway", options.gatewayScript, { ...common, ...loadGatewayEnv(gatewayPort, prefix) }, profile);
    processes.push(gateway);
    const baseUrls = [`http://127.0.0.1:${gatewayPort}`];
    const gateways = [gateway];
    if (options.compareGatewayScript !== undefined) {
      const port = await freePort();
      const compared = startServiceProcess("gateway-compared", options.compareGatewayScript, { ...common, ...loadGatewayEnv(port, prefix) });
      processes.push(compared);
      gateways.push(compared);
      baseUrls.push(`http://127.0.0.1:${port}`);
    }
    for (const [i, url] of baseUrls.entries()) await waitFor("gateway ready", async () => (await fetch(`${url}/ready`)).status === 200, 60_000, gateways[i]);
    const { stdout } = await run(process.execPath, ["services/memory/dist/cli.js", "create-tenant", "load"], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? "", DATABASE_URL: db.url },
    });
    const { apiKey } = JSON.parse(stdout) as { apiKey: string };

    const maxUsers = Math.max(...options.concurrency);
    const clients: Client[] = [];
    for (let i = 0; i < maxUsers; i++) {
      const gatewayIndex = i % baseUrls.length;
      const baseUrl = baseUrls[gatewayIndex]!;
      if (options.surface === "rest") {
        clients.push({ surface: "rest", baseUrl, apiKey, gateway: gatewayIndex });
      } else {
        const mcp = await connectMcp(`${baseUrl}/mcp`, apiKey, { modern: true });
        mcps.push(mcp);
        clients.push({ surface: "mcp", mcp, gateway: gatewayIndex });
      }
    }
    if (options.seed > 0) {
      process.stderr.write(`storing ${options.seed} memories before the first step…\n`);
      let next = 0;
      await Promise.all(
        clients.slice(0, 8).map(async (client, id) => {
          while (next < options.seed) await operation(client, "remember", 1000 + id, next++);
        }),
      );
    }
    // A short warm-up so the first step does not pay for JIT and connection set-up.
    const warm: Sample[] = [];
    await Promise.all(clients.slice(0, 4).map((client, id) => user(client, id, options.writesPercent, performance.now() + 3_000, warm)));

    console.log(
      `\nbench:load — distributed (gateway, ${options.memoryReplicas} memory, ${options.searchReplicas} search process(es)), ${options.surface === "mcp" ? "MCP" : "REST"}, ` +
        `${100 - options.writesPercent}% search / ${options.writesPercent}% remember, embedder ${options.embedder}${options.embedder === "hashing" ? ` (${options.dimensions} dimensions)` : ""}, ${options.stepSeconds} s per step, Node.js ${process.versions.node}`,
    );
    console.log(
      "conc   ops/s  search/s  writes/s | search p50    p95    p99 | remember p50   p95    p99 | errors | CPU % of a core (ms per operation) and RSS MB per process",
    );
    for (const concurrency of options.concurrency) {
      const samples: Sample[] = [];
      const before = processes.map((p) => usage(p.child.pid!));
      const database = new URL(db.url).pathname.slice(1);
      const backendsBefore = ticksOf(postgresBackends(database));
      const clientBefore = process.cpuUsage();
      const started = performance.now();
      const until = started + options.stepSeconds * 1000;
      await Promise.all(clients.slice(0, concurrency).map((client, id) => user(client, id, options.writesPercent, until, samples)));
      const seconds = (performance.now() - started) / 1000;
      const after = processes.map((p) => usage(p.child.pid!));
      const client = process.cpuUsage(clientBefore);
      let backendTicks = 0;
      for (const [pid, ticks] of ticksOf([...backendsBefore.keys(), ...postgresBackends(database)])) backendTicks += ticks - (backendsBefore.get(pid) ?? 0);
      const operations = samples.length;
      const share = (ticks: number) =>
        `${((ticks / TICKS_PER_SECOND / seconds) * 100).toFixed(0)}% (${((ticks / TICKS_PER_SECOND / Math.max(operations, 1)) * 1000).toFixed(2)} ms/op)`;
      const of = (op: Sample["op"]) => samples.filter((s) => s.op === op && s.ok).map((s) => s.ms);
      const searches = of("search");
      const writes = of("remember");
      const searchP = percentiles(searches);
      const writeP = percentiles(writes);
      const errors = samples.filter((s) => !s.ok).length;
      const f = (x: number) => (Number.isNaN(x) ? "     -" : x.toFixed(1).padStart(6));
      const perProcess = processes
        .map((p, i) => `${p.name} ${share(after[i]!.cpuTicks - before[i]!.cpuTicks)} ${after[i]!.rssMb.toFixed(0)}MB`)
        .concat([`postgres ${share(backendTicks)}`, `bench client ${share(((client.user + client.system) / 1e6) * TICKS_PER_SECOND)}`])
        .join(", ");
      console.log(
        `${String(concurrency).padStart(4)} ${((searches.length + writes.length) / seconds).toFixed(1).padStart(7)} ${(searches.length / seconds).toFixed(1).padStart(9)} ${(writes.length / seconds).toFixed(1).padStart(9)} |` +
          `${f(searchP.p50)} ${f(searchP.p95)} ${f(searchP.p99)} |` +
          `${f(writeP.p50)} ${f(writeP.p95)} ${f(writeP.p99)} |` +
          ` ${String(errors).padStart(6)} | ${perProcess}`,
      );
      if (gateways.length > 1) {
        // Each gateway's CPU over the operations it served, and their latency, side by side.
        const side = gateways.map((g, i) => {
          const at = processes.indexOf(g);
          const served = samples.filter((s) => s.gateway === i && s.ok).map((s) => s.ms);
          const ms = ((after[at]!.cpuTicks - before[at]!.cpuTicks) / TICKS_PER_SECOND / Math.max(served.length, 1)) * 1000;
          const p = percentiles(served);
          return `${i === 0 ? options.gatewayScript : options.compareGatewayScript}: ${served.length} ops, ${ms.toFixed(2)} ms CPU/op, p50 ${f(p.p50)} p95 ${f(p.p95)}`;
        });
        console.log(`     gateways side by side: ${side.join(" | ")}`);
      }
    }
    return 0;
  } finally {
    for (const mcp of mcps) await mcp.close().catch(() => {});
    for (const proc of processes.reverse()) await proc.stop();
    await db.drop();
    await deleteKeyPrefix(prefix);
  }
}
