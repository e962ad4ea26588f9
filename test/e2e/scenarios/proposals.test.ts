/**
 * Proposals end to end in distributed mode: the four services as separate processes against
 * PostgreSQL + pgvector and Redis/BullMQ, driven through the gateway with the official MCP client
 * and plain HTTP. The consolidation scan is run on demand with the consolidator's CLI (it queues
 * the job the hourly schedule would), fact extraction runs on its own after each remember.
 *
 * The last scenario kills the consolidator with SIGKILL while a job is provably running (its
 * request is held open by a local OpenAI-compatible server the LLM extractor calls), restarts it,
 * and checks that BullMQ's stalled-job recovery finishes every job once.
 */
import { execFile } from "node:child_process";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "@3ngram/db";
import { checkHealth } from "@3ngram/rpc";
import { createRedisQueueBackend, type QueueBackend } from "@3ngram/queue";
import { EXTRACTION_QUEUE } from "@3ngram/schema";
import { createTestDatabase, deleteKeyPrefix, TEST_REDIS_URL, uniqueKeyPrefix, type TestDatabase } from "../../support/database.js";
import { createTestKeys } from "../../support/keys.js";
import { serviceEnv } from "../../support/service-env.js";
import { connectMcp, type McpConnection } from "../../support/mcp.js";
import { eventually, freePort, REPO_ROOT, startServiceProcess, waitFor, type ServiceProcess } from "../../support/processes.js";

const run = promisify(execFile);

interface Tenant {
  tenantId: string;
  apiKey: string;
}
interface EdgeProposal {
  id: string;
  fromId: string;
  toId: string;
  edgeType: string;
  status: string;
  similarity: number;
  decisionRationale: string | null;
}
interface FactProposal {
  id: string;
  memoryId: string;
  subject: string;
  predicate: string;
  value: string;
  extractor: string;
  status: string;
}
interface ListOut {
  action: string;
  proposals: EdgeProposal[];
  count: number;
  factProposals?: FactProposal[];
}

let db: TestDatabase;
let owner: Pool;
let prefix: string;
let common: Record<string, string>;
let consolidatorEnv: Record<string, string>;
let consolidatorMetrics: string;
let processes: Record<"memory" | "search" | "consolidator" | "gateway", ServiceProcess>;
let baseUrl: string;
let tenant: Tenant;
let mcp: McpConnection;
let queues: QueueBackend;

async function cli(script: string, args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await run(process.execPath, [script, ...args], { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? "", ...env } });
  return stdout;
}

/** What the hourly schedule would do, now: queue a consolidation scan of every tenant. */
async function runConsolidationScan(): Promise<void> {
  const out = await cli("services/consolidator/dist/cli.js", ["run", "consolidation-scan"], { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix });
  expect(JSON.parse(out)).toMatchObject({ queued: "consolidation-scan", queue: "maintenance" });
}

/** The running consolidator's count of `job` attempts ending in `outcome`. */
async function jobsTotal(job: string, outcome: string): Promise<number> {
  const text = await (await fetch(`${consolidatorMetrics}/metrics`)).text();
  const line = text
    .split("\n")
    .find((l) => l.startsWith("threengram_consolidator_jobs_total{") && l.includes(`job="${job}"`) && l.includes(`outcome="${outcome}"`));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
}

function rest(path: string, init: { method?: string; json?: unknown } = {}): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method: init.method ?? "GET",
    headers: { authorization: `Bearer ${tenant.apiKey}`, ...(init.json !== undefined ? { "content-type": "application/json" } : {}) },
    ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
  });
}

const list = (args: Record<string, unknown> = {}) => mcp.call<ListOut>("review_proposals", { action: "list", ...args });
const remember = async (args: Record<string, unknown>) => (await mcp.call<{ memory: { id: string } }>("remember", args)).memory.id;

function startConsolidator(extra: Record<string, string> = {}): ServiceProcess {
  return startServiceProcess("consolidator", "services/consolidator/dist/main.js", { ...consolidatorEnv, ...extra });
}

async function consolidatorUp(proc: ServiceProcess): Promise<void> {
  await waitFor("consolidator health", async () => (await fetch(`${consolidatorMetrics}/healthz`)).status === 200, 60_000, proc);
}

beforeAll(async () => {
  db = await createTestDatabase("e2eproposals");
  owner = createPool({ connectionString: db.url, max: 2, applicationName: "3ngram-e2e" });
  prefix = uniqueKeyPrefix("e2eproposals");
  const keys = await createTestKeys();
  const [memoryPort, searchPort, gatewayPort, metricsPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  common = serviceEnv({ databaseUrl: db.url, redisUrl: TEST_REDIS_URL, prefix, keys, memoryPort, searchPort });
  // A short job lock, so a killed consolidator's running jobs are taken over within seconds.
  consolidatorEnv = { ...common, METRICS_PORT: String(metricsPort), JOB_LOCK_MS: "2000" };
  consolidatorMetrics = `http://127.0.0.1:${metricsPort}`;
  const memory = startServiceProcess("memory", "services/memory/dist/main.js", { ...common, GRPC_PORT: String(memoryPort) });
  await waitFor("memory health", async () => (await checkHealth(common.MEMORY_ADDR!)) === "SERVING", 60_000, memory);
  const search = startServiceProcess("search", "services/search/dist/main.js", { ...common, GRPC_PORT: String(searchPort) });
  const consolidator = startConsolidator();
  const gateway = startServiceProcess("gateway", "services/gateway/dist/main.js", {
    ...common,
    PORT: String(gatewayPort),
    HOST: "127.0.0.1",
    RATE_LIMIT_KEY_PREFIX: `${prefix}:rl`,
  });
  processes = { memory, search, consolidator, gateway };
  baseUrl = `http://127.0.0.1:${gatewayPort}`;
  await waitFor("search health", async () => (await checkHealth(common.SEARCH_ADDR!)) === "SERVING", 60_000, search);
  await waitFor("gateway readiness", async () => (await fetch(`${baseUrl}/ready`)).status === 200, 60_000, gateway);
  await consolidatorUp(consolidator);
  tenant = JSON.parse(await cli("services/memory/dist/cli.js", ["create-tenant", "proposals"], { DATABASE_URL: db.url })) as Tenant;
  mcp = await connectMcp(`${baseUrl}/mcp`, tenant.apiKey);
  queues = createRedisQueueBackend({ redisUrl: TEST_REDIS_URL, prefix });
}, 180_000);

afterAll(async () => {
  await mcp?.close().catch(() => {});
  await queues?.close();
  for (const p of Object.values(processes ?? {})) await p.stop();
  await owner?.end();
  await db?.drop();
  if (prefix) await deleteKeyPrefix(prefix);
});

describe("proposals in distributed mode", () => {
  let older = "";
  let newer = "";
  let lift = "";

  it("proposes one consolidation and one fact: near duplicates are paired, 'top set 98 kg' is extracted", async () => {
    older = await remember({
      memoryType: "decision",
      topic: "payments provider",
      content: "We decided to use Stripe for card payments in the EU launch.",
      project: "billing",
    });
    newer = await remember({
      memoryType: "decision",
      topic: "payments provider",
      content: "We decided to use Stripe for all card payments in the EU launch.",
      project: "billing",
    });
    lift = await remember({ memoryType: "fact", topic: "Back squat", content: "Top set 98 kg today, felt fast." });

    // Extraction runs by itself after each remember; the scan runs when asked (the schedule's job, queued now).
    await eventually(async () => expect((await list()).factProposals).toHaveLength(1), 30_000);
    await runConsolidationScan();
    await eventually(async () => expect((await list()).count).toBe(1), 30_000);

    const listed = await list();
    expect(listed.proposals).toEqual([expect.objectContaining({ fromId: newer, toId: older, edgeType: "supersedes", status: "proposed" })]);
    expect(listed.proposals[0]!.similarity).toBeGreaterThanOrEqual(0.92);
    expect(listed.factProposals).toEqual([
      expect.objectContaining({ memoryId: lift, subject: "back_squat", predicate: "top_set.weight_kg", value: "98", extractor: "rules/1", status: "proposed" }),
    ]);
    // Nothing proposed is truth yet.
    expect((await mcp.call<{ facts: unknown[] }>("get_facts", { subject: "back_squat" })).facts).toEqual([]);
  });

  it("accepting both materialises the edge (the predecessor ranks below its successor) and the fact", async () => {
    const { proposals, factProposals } = await list();
    const edge = await mcp.call<{ action: string; proposal: EdgeProposal }>("review_proposals", { action: "accept", proposalId: proposals[0]!.id });
    expect(edge).toMatchObject({ action: "applied", proposal: { status: "applied" } });
    const fact = await mcp.call<{ action: string; proposal: FactProposal }>("review_proposals", { action: "accept", proposalId: factProposals![0]!.id });
    expect(fact).toMatchObject({ action: "applied_fact", proposal: { status: "applied" } });

    const history = (await (await rest(`/api/v1/memories/${older}/history`)).json()) as {
      edges: Array<{ fromId: string; toId: string; edgeType: string }>;
      lifecycleState: string;
    };
    expect(history.lifecycleState).toBe("superseded");
    expect(history.edges).toEqual([expect.objectContaining({ fromId: newer, toId: older, edgeType: "supersedes" })]);
    const got = await mcp.call<{ memories: Array<{ id: string; supersededBy: string | null }> }>("get_memories", { ids: [older] });
    expect(got.memories[0]!.supersededBy).toBe(newer);

    const found = await mcp.call<{ hits: Array<{ id: string }> }>("search", { query: "Stripe card payments for the EU launch", limit: 10 });
    const ids = found.hits.map((h) => h.id);
    expect(ids).toContain(older);
    expect(ids.indexOf(newer)).toBeLessThan(ids.indexOf(older));

    const facts = await mcp.call<{ facts: Array<{ subject: string; predicate: string; value: string; memoryId: string }> }>("get_facts", {
      subject: "back_squat",
    });
    expect(facts.facts.map((f) => `${f.subject} ${f.predicate} = ${f.value}`)).toEqual(["back_squat top_set.weight_kg = 98"]);
    expect(facts.facts[0]!.memoryId).toBe(lift);
    expect((await list()).count).toBe(0);
  });

  it("a rejected pair is not proposed again when the scan runs again", async () => {
    const a = await remember({ memoryType: "decision", topic: "deploy window", content: "Deploys happen on Tuesday and Thursday mornings after the standup." });
    const b = await remember({
      memoryType: "decision",
      topic: "deploy window",
      content: "Deploys happen on Tuesday and Thursday mornings after the standup meeting ends.",
    });
    await runConsolidationScan();
    await eventually(async () => expect((await list()).count).toBe(1), 30_000);
    const [proposal] = (await list()).proposals;
    expect(proposal).toMatchObject({ fromId: b, toId: a });

    const rejected = await rest(`/api/v1/proposals/${proposal!.id}/reject`, { method: "POST", json: { rationale: "two different release trains" } });
    expect(await rejected.json()).toMatchObject({ action: "rejected", proposal: { status: "rejected", decisionRationale: "two different release trains" } });

    const before = await jobsTotal("consolidate-tenant", "nothing_new");
    await runConsolidationScan();
    await eventually(async () => expect(await jobsTotal("consolidate-tenant", "nothing_new")).toBe(before + 1), 30_000);
    expect((await list()).count).toBe(0);
    const decided = (await (await rest("/api/v1/proposals?status=rejected")).json()) as ListOut;
    expect(decided.proposals.map((p) => p.id)).toEqual([proposal!.id]);
    const { rows } = await owner.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM consolidation_proposals WHERE LEAST(from_id, to_id) = LEAST($1::uuid, $2::uuid) AND GREATEST(from_id, to_id) = GREATEST($1::uuid, $2::uuid)",
      [a, b],
    );
    expect(rows[0]!.n).toBe(1);
  });

  it("a consolidator killed mid-job and restarted loses nothing and duplicates nothing", async () => {
    // The LLM extractor, pointed at a local chat-completions server that holds the first request open.
    const llm = await startLlmStub();
    try {
      await processes.consolidator.stop();
      const llmEnv = {
        FACT_EXTRACTOR: "llm",
        FACT_EXTRACTOR_LLM_BASE_URL: `${llm.url}/v1`,
        FACT_EXTRACTOR_LLM_MODEL: "stub-model",
        FACT_EXTRACTOR_LLM_TIMEOUT_MS: "60000",
      };
      processes.consolidator = startConsolidator(llmEnv);
      await consolidatorUp(processes.consolidator);

      const ids: string[] = [];
      for (const n of [1, 2, 3, 4])
        ids.push(await remember({ memoryType: "note", topic: `training block ${n}`, content: `Marker k${n}: block ${n} of the training plan.` }));
      // A job is provably running (its extractor call is open): kill the process without warning.
      const heldMarker = await llm.held;
      const killed = processes.consolidator;
      await killed.stop("SIGKILL");
      expect(killed.child.signalCode).toBe("SIGKILL");
      llm.release();

      processes.consolidator = startConsolidator(llmEnv);
      await consolidatorUp(processes.consolidator);
      const proposalsOf = async () =>
        (
          await owner.query<{ memory_id: string; predicate: string; value: string; extractor: string }>(
            "SELECT memory_id, predicate, value, extractor FROM fact_proposals WHERE memory_id = ANY($1::uuid[]) ORDER BY predicate",
            [ids],
          )
        ).rows;
      await eventually(async () => expect(await proposalsOf()).toHaveLength(4), 60_000);
      await eventually(async () => expect(await queues.counts(EXTRACTION_QUEUE)).toEqual({ waiting: 0, active: 0, delayed: 0, failed: 0 }), 30_000);

      // Every memory got its fact exactly once, from the extractor that ran; the held job ran twice.
      expect(await proposalsOf()).toEqual(
        ids.map((memoryId, i) => ({ memory_id: memoryId, predicate: `marker.k${i + 1}`, value: String(i + 1), extractor: "llm/stub-model" })),
      );
      expect(llm.seen.filter((m) => m === heldMarker).length).toBeGreaterThanOrEqual(2);
      const listed = await list({ limit: 100 });
      expect(listed.factProposals!.filter((f) => ids.includes(f.memoryId))).toHaveLength(4);
    } finally {
      await llm.close();
    }
  }, 150_000);
});

interface LlmStub {
  url: string;
  /** Resolves with the marker of the first request once it has arrived (and is being held). */
  held: Promise<string>;
  /** Markers of every request, in arrival order. */
  seen: string[];
  release(): void;
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible chat-completions server: it answers one fact per memory, read from the
 * "Marker kN" in its text, except that it never answers the first request it receives.
 */
async function startLlmStub(): Promise<LlmStub> {
  const seen: string[] = [];
  let holding = true;
  let markHeld!: (marker: string) => void;
  const held = new Promise<string>((resolve) => (markHeld = resolve));
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      const marker = /Marker (k\d+)/.exec(body)?.[1] ?? "none";
      seen.push(marker);
      if (holding) {
        holding = false;
        markHeld(marker);
        return; // never answered: the caller is killed while waiting
      }
      const n = marker.slice(1);
      const content = JSON.stringify({ facts: [{ subject: "training_plan", predicate: `marker.${marker}`, value: n, confidence: 0.9 }] });
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ choices: [{ index: 0, message: { role: "assistant", content } }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    seen,
    release: () => void (holding = false),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
