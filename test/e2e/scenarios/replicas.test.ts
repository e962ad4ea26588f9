/**
 * Scaled out for real: three search processes and two memory processes, each behind one gRPC
 * target (`ipv4:` with every replica's address, round-robin), driven through the gateway by a
 * write load and six closed-loop searchers. Each replica's own call counters (its /metrics) show
 * the spread. Ten times over, one search replica is frozen (SIGSTOP) long enough for searches to
 * be in flight on it and then killed (SIGKILL): no search fails, because a search is an idempotent
 * read the channel retries on another replica within its deadline; the replica is restarted on
 * the same address before the next round. A replica that starts later gets traffic well within
 * the servers' max connection age, which is lowered here so connections cycle under load.
 */
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkHealth } from "@3ngram/rpc";
import { createTestDatabase, deleteKeyPrefix, TEST_REDIS_URL, uniqueKeyPrefix, type TestDatabase } from "../../support/database.js";
import { ACCEPTABLE_STATUSES, FaultLoad } from "../../support/fault-load.js";
import { createTestKeys } from "../../support/keys.js";
import { connectMcp, type McpConnection } from "../../support/mcp.js";
import { eventually, freePort, REPO_ROOT, startServiceProcess, waitFor, type ServiceProcess } from "../../support/processes.js";
import { loadGatewayEnv, serviceEnv } from "../../support/service-env.js";

const run = promisify(execFile);

/** Lowered from the 5-minute default so that connections are recycled several times under load. */
const MAX_CONNECTION_AGE_MS = 4_000;
/** Searches served before the first fault, and searches started after each kill, before each check is made. */
const SEARCHES_BEFORE_KILL = 45;
const SEARCHES_AFTER_KILL = 20;
/** Rounds of freeze-then-kill, and how long the replica stays frozen with searches piling up on it. */
const ROUNDS = 10;
const FREEZE_MS = 300;
/** Liveness bound for reaching those counts on a slow, shared machine; not a speed target. */
const LOAD_BOUND_MS = 40_000;

interface Replica {
  name: string;
  grpcPort: number;
  metricsPort: number;
  env: Record<string, string>;
  proc?: ServiceProcess;
}

let db: TestDatabase;
let prefix: string;
let gateway: ServiceProcess;
let mcp: McpConnection;
let load: FaultLoad;
const memories: Replica[] = [];
/** Three replicas start at once; the fourth address is listed from the start and comes up later. */
const searches: Replica[] = [];
const figures: Record<string, unknown> = {};

function target(replicas: Replica[]): string {
  return `ipv4:${replicas.map((r) => `127.0.0.1:${r.grpcPort}`).join(",")}`;
}

async function replicas(kind: "memory" | "search", count: number): Promise<Replica[]> {
  const list: Replica[] = [];
  for (let i = 1; i <= count; i++) list.push({ name: `${kind}-${i}`, grpcPort: await freePort(), metricsPort: await freePort(), env: {} });
  return list;
}

function start(replica: Replica, script: string): ServiceProcess {
  replica.proc = startServiceProcess(replica.name, script, { ...replica.env, GRPC_PORT: String(replica.grpcPort), METRICS_PORT: String(replica.metricsPort) });
  return replica.proc;
}

/** Calls this replica has served of one RPC (any outcome), read from its own /metrics. */
async function served(replica: Replica, rpc: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${replica.metricsPort}/metrics`)).text();
  let total = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("threengram_rpc_server_seconds_count{") && line.includes(`rpc="${rpc}"`)) total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}

const SEARCH_RPC = "search.v1.SearchService/Search";
const REMEMBER_RPC = "memory.v1.MemoriesService/Remember";

beforeAll(async () => {
  db = await createTestDatabase("replicas");
  prefix = uniqueKeyPrefix("replicas");
  const keys = await createTestKeys();
  memories.push(...(await replicas("memory", 2)));
  searches.push(...(await replicas("search", 4)));
  const gatewayPort = await freePort();
  const common = {
    ...serviceEnv({ databaseUrl: db.url, redisUrl: TEST_REDIS_URL, prefix, keys, memoryPort: memories[0]!.grpcPort, searchPort: searches[0]!.grpcPort }),
    MEMORY_ADDR: target(memories),
    SEARCH_ADDR: target(searches),
    GRPC_MAX_CONNECTION_AGE_MS: String(MAX_CONNECTION_AGE_MS),
    // Six service processes share the machine's PostgreSQL with other suites: small pools.
    DATABASE_POOL_MAX: "4",
  };
  for (const replica of [...memories, ...searches]) replica.env = common;
  // The first memory replica migrates; the second starts on the migrated database.
  start(memories[0]!, "services/memory/dist/main.js");
  await waitFor("memory-1 serving", async () => (await checkHealth(`127.0.0.1:${memories[0]!.grpcPort}`)) === "SERVING", 60_000, memories[0]!.proc);
  start(memories[1]!, "services/memory/dist/main.js");
  for (const replica of searches.slice(0, 3)) start(replica, "services/search/dist/main.js");
  gateway = startServiceProcess("gateway", "services/gateway/dist/main.js", { ...common, ...loadGatewayEnv(gatewayPort, prefix) });
  for (const replica of [memories[1]!, ...searches.slice(0, 3)]) {
    await waitFor(`${replica.name} serving`, async () => (await checkHealth(`127.0.0.1:${replica.grpcPort}`)) === "SERVING", 60_000, replica.proc);
  }
  const baseUrl = `http://127.0.0.1:${gatewayPort}`;
  await waitFor("gateway ready", async () => (await fetch(`${baseUrl}/ready`)).status === 200, 60_000, gateway);
  const { stdout } = await run(process.execPath, ["services/memory/dist/cli.js", "create-tenant", "replicas"], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", DATABASE_URL: db.url },
  });
  const { apiKey } = JSON.parse(stdout) as { apiKey: string };
  mcp = await connectMcp(`${baseUrl}/mcp`, apiKey);
  load = new FaultLoad({
    baseUrl,
    apiKey,
    mcp,
    runId: randomUUID().slice(0, 8),
    restWriters: 1,
    mcpWriters: 1,
    restSearchers: 4,
    mcpSearchers: 2,
    pauseMs: 10,
  });
  load.start();
}, 120_000);

afterAll(async () => {
  await load?.stop();
  await mcp?.close().catch(() => {});
  for (const proc of [gateway, ...memories.map((r) => r.proc), ...searches.map((r) => r.proc)]) await proc?.stop();
  await db?.drop();
  await deleteKeyPrefix(prefix);
  console.log(`replica figures: ${JSON.stringify(figures)}`);
}, 60_000);

describe("search and memory scaled out behind one address", () => {
  it(
    "spreads searches over the three search replicas and writes over both memory replicas",
    async () => {
      const servedSoFar = async () => (await Promise.all(searches.slice(0, 3).map((r) => served(r, SEARCH_RPC)))).reduce((a, b) => a + b, 0);
      await eventually(async () => expect(await servedSoFar()).toBeGreaterThanOrEqual(SEARCHES_BEFORE_KILL), LOAD_BOUND_MS, 200);
      const perSearch = await Promise.all(searches.slice(0, 3).map((r) => served(r, SEARCH_RPC)));
      const perMemory = await Promise.all(memories.map((r) => served(r, REMEMBER_RPC)));
      figures.searchesPerReplicaBeforeKill = perSearch;
      figures.writesPerReplica = perMemory;
      const total = perSearch.reduce((a, b) => a + b, 0);
      // Round-robin: each replica takes close to a third; a fifth is far from "one replica does it all".
      for (const count of perSearch) expect(count).toBeGreaterThan(total / 5);
      for (const count of perMemory) expect(count).toBeGreaterThan(0);
    },
    LOAD_BOUND_MS + 10_000,
  );

  it(
    "fails no search when a search replica is frozen with searches in flight on it and then killed, ten rounds over",
    async () => {
      const victim = searches[2]!;
      const rounds: Array<{ killedAt: number; inFlight: number; startedAfter: number; backInMs: number }> = [];
      for (let round = 1; round <= ROUNDS; round++) {
        // The victim takes searches before it is frozen, so some are sure to reach it while it is.
        await eventually(async () => expect(await served(victim, SEARCH_RPC)).toBeGreaterThan(0), LOAD_BOUND_MS, 50);
        victim.proc!.child.kill("SIGSTOP");
        await new Promise((resolve) => setTimeout(resolve, FREEZE_MS));
        const killedAt = Date.now();
        victim.proc!.child.kill("SIGKILL");
        await victim.proc!.exited();
        const startedAfter = () => load.outcomes.filter((o) => o.kind === "search" && o.startedAt >= killedAt);
        await eventually(() => expect(startedAfter().length).toBeGreaterThanOrEqual(SEARCHES_AFTER_KILL), LOAD_BOUND_MS, 50);
        // Searches that were waiting on the frozen replica when it died: begun well before the kill
        // (a search here takes milliseconds) and answered after it.
        const inFlight = load.outcomes.filter((o) => o.kind === "search" && o.startedAt <= killedAt - FREEZE_MS / 2 && o.at > killedAt).length;
        const restartAt = Date.now();
        start(victim, "services/search/dist/main.js");
        await waitFor(`${victim.name} serving again`, async () => (await checkHealth(`127.0.0.1:${victim.grpcPort}`)) === "SERVING", 60_000, victim.proc);
        rounds.push({ killedAt, inFlight, startedAfter: startedAfter().length, backInMs: Date.now() - restartAt });
      }
      figures.rounds = rounds.map(({ killedAt: _, ...rest }) => rest);
      figures.killedAt = rounds.map((r) => r.killedAt);
      // The freeze did catch searches on the replica: across the rounds, many were in flight when it died.
      expect(rounds.filter((r) => r.inFlight > 0).length).toBeGreaterThanOrEqual(ROUNDS / 2);
      const failed = load.outcomes.filter((o) => o.kind === "search" && !o.ok);
      expect(failed.map((o) => `${o.surface} ${o.status}`)).toEqual([]);
    },
    ROUNDS * 15_000,
  );

  it("sends traffic to a replica that starts later, within the max connection age", async () => {
    const newcomer = searches[3]!;
    start(newcomer, "services/search/dist/main.js");
    await waitFor(`${newcomer.name} serving`, async () => (await checkHealth(`127.0.0.1:${newcomer.grpcPort}`)) === "SERVING", 60_000, newcomer.proc);
    const servingAt = Date.now();
    await eventually(async () => expect(await served(newcomer, SEARCH_RPC)).toBeGreaterThan(0), MAX_CONNECTION_AGE_MS, 50);
    figures.newcomerFirstTrafficMs = Date.now() - servingAt;
  }, 90_000);

  it("answered every search of the load, and writes only with success or a retryable unavailable", async () => {
    await load.stop();
    const searchesDone = load.outcomes.filter((o) => o.kind === "search");
    const writesDone = load.outcomes.filter((o) => o.kind === "write");
    const kills = figures.killedAt as number[];
    const describe = (o: (typeof load.outcomes)[number]) => {
      const lastKill = kills.filter((at) => at <= o.at).at(-1);
      const when = lastKill === undefined ? "before any kill" : `${o.startedAt - lastKill} ms after a kill`;
      return `${o.kind} ${o.surface} ${o.status}, started ${when}, took ${o.at - o.startedAt} ms`;
    };
    figures.searches = searchesDone.length;
    figures.writes = writesDone.length;
    // Writes are not retried by the channel (their caller repeats them with the idempotency key);
    // one can meet a transient fault of the shared database, which must reach the client as such.
    figures.writesUnavailable = writesDone.filter((o) => !o.ok).map(describe);
    expect(searchesDone.filter((o) => !o.ok).map(describe)).toEqual([]);
    expect(writesDone.filter((o) => !ACCEPTABLE_STATUSES.has(o.status)).map(describe)).toEqual([]);
    for (const proc of [gateway, ...memories.map((r) => r.proc!), ...searches.map((r) => r.proc!)]) {
      expect(proc.child.exitCode, proc.name).toBeNull();
    }
  });
});
