import { readFileSync } from "node:fs";
import { memoryTypeSchema, type MemoryType } from "@3ngram/schema";

/**
 * The golden set's shapes and the checks that keep it honest. Fixture ids (m001, r001, …) are
 * ours; the database assigns real ids at load time and the runner maps between the two.
 */

export interface FixtureMemory {
  id: string;
  type: MemoryType;
  scope: string;
  project?: string;
  topic: string;
  content: string;
  tags?: string[];
  owner?: string;
  /** Loaded with revise on this (earlier) memory instead of remember. */
  revises?: string;
  edge?: "supersedes" | "updates";
}

type Slice = "retrieval" | "supersession" | "abstention";

export interface FixtureQuery {
  id: string;
  slice: Slice;
  query: string;
  /** Any of these in the top 5 counts as found. Empty for abstention queries. */
  expected: string[];
  /** Supersession only: predecessors that must not outrank the successor. */
  forbidden?: string[];
  /** Abstention only: words whose absence from every memory makes the topic verifiably absent. */
  absentTerms?: string[];
  /**
   * Abstention only: an absent topic whose vocabulary overlaps stored memories (near-domain), which
   * the bundled offline model cannot yet tell from a paraphrase. Measured and printed, not gated.
   */
  advisory?: boolean;
  /** Search this scope only (LoCoMo, eval/locomo: each question within its own conversation); unset: every scope. */
  scope?: string;
}

export interface Fixture {
  memories: FixtureMemory[];
  queries: FixtureQuery[];
}

/** Minimum sizes the issue asks of the golden set; the loader refuses a smaller fixture. */
const FIXTURE_MINIMUMS = { memories: 150, chains: 20, retrieval: 60, supersession: 20, abstention: 10, queries: 90 } as const;

export function loadFixture(dir: URL): Fixture {
  const read = (name: string): unknown => JSON.parse(readFileSync(new URL(name, dir), "utf8"));
  const memories = (read("memories.json") as { memories: FixtureMemory[] }).memories;
  const queries = (read("queries.json") as { queries: FixtureQuery[] }).queries;
  const fixture = { memories, queries };
  const problems = validateFixture(fixture);
  if (problems.length > 0) throw new Error(`invalid golden set:\n  ${problems.join("\n  ")}`);
  return fixture;
}

/** Every structural rule of the golden set; returns the problems found (ids only, never text). */
export function validateFixture({ memories, queries }: Fixture): string[] {
  const problems: string[] = [];
  const byId = new Map<string, FixtureMemory>();
  const successorOf = new Map<string, string>();
  for (const m of memories) {
    if (byId.has(m.id)) problems.push(`${m.id}: duplicate memory id`);
    if (!memoryTypeSchema.safeParse(m.type).success) problems.push(`${m.id}: unknown type`);
    if (m.revises !== undefined) {
      // Revise needs the predecessor loaded first, and a memory can be revised only once.
      if (!byId.has(m.revises)) problems.push(`${m.id}: revises ${m.revises}, which is not an earlier memory`);
      if (successorOf.has(m.revises)) problems.push(`${m.revises}: revised twice`);
      if (m.edge !== "supersedes" && m.edge !== "updates") problems.push(`${m.id}: edge must be supersedes or updates`);
      successorOf.set(m.revises, m.id);
    } else if (m.edge !== undefined) {
      problems.push(`${m.id}: edge without revises`);
    }
    byId.set(m.id, m);
  }

  const types = new Set(memories.map((m) => m.type));
  for (const t of memoryTypeSchema.options) if (!types.has(t)) problems.push(`no memory of type ${t}`);
  const edges = new Set(memories.flatMap((m) => (m.edge ? [m.edge] : [])));
  for (const e of ["supersedes", "updates"]) if (!edges.has(e as "supersedes")) problems.push(`no chain uses ${e}`);

  const queryIds = new Set<string>();
  const textOf = memories.map((m) => `${m.topic}\n${m.content}`.toLowerCase());
  for (const q of queries) {
    if (queryIds.has(q.id)) problems.push(`${q.id}: duplicate query id`);
    queryIds.add(q.id);
    for (const id of [...q.expected, ...(q.forbidden ?? [])]) if (!byId.has(id)) problems.push(`${q.id}: unknown memory ${id}`);
    if (q.advisory !== undefined && (q.slice !== "abstention" || q.advisory !== true))
      problems.push(`${q.id}: only an abstention query can be advisory (advisory: true)`);
    if (q.slice === "abstention") {
      if (q.expected.length > 0) problems.push(`${q.id}: an abstention query expects nothing`);
      if (!q.absentTerms || q.absentTerms.length === 0) problems.push(`${q.id}: an abstention query lists the terms that are absent`);
      for (const term of q.absentTerms ?? []) {
        const word = new RegExp(`\\b${term.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`);
        const hit = memories.find((_, i) => word.test(textOf[i] ?? ""));
        if (hit) problems.push(`${q.id}: absent term appears in ${hit.id}`);
      }
      continue;
    }
    if (q.expected.length === 0) problems.push(`${q.id}: an answerable query expects at least one memory`);
    // Answerable queries ask about the present: the memories they expect are current.
    for (const id of q.expected) if (successorOf.has(id)) problems.push(`${q.id}: expects ${id}, which has been revised`);
    if (q.slice === "supersession") {
      const [head] = q.expected;
      if (q.expected.length !== 1 || head === undefined) problems.push(`${q.id}: a supersession query expects exactly its chain's head`);
      if (!q.forbidden || q.forbidden.length === 0) problems.push(`${q.id}: a supersession query forbids the predecessors`);
      // The forbidden ids are exactly the head's predecessors, walking the chain back.
      const chain: string[] = [];
      for (let at = head ? byId.get(head)?.revises : undefined; at; at = byId.get(at)?.revises) chain.push(at);
      if ([...(q.forbidden ?? [])].sort().join() !== [...chain].sort().join()) problems.push(`${q.id}: forbidden must list the head's predecessors`);
    } else if (q.forbidden && q.forbidden.length > 0) {
      problems.push(`${q.id}: only supersession queries forbid memories`);
    }
  }

  const count = (slice: Slice) => queries.filter((q) => q.slice === slice && !q.advisory).length;
  const checks: Array<[string, number, number]> = [
    ["memories", memories.length, FIXTURE_MINIMUMS.memories],
    ["supersession chain links", successorOf.size, FIXTURE_MINIMUMS.chains],
    ["retrieval queries", count("retrieval"), FIXTURE_MINIMUMS.retrieval],
    ["supersession queries", count("supersession"), FIXTURE_MINIMUMS.supersession],
    ["abstention queries", count("abstention"), FIXTURE_MINIMUMS.abstention],
    ["gated queries", queries.filter((q) => !q.advisory).length, FIXTURE_MINIMUMS.queries],
  ];
  for (const [what, n, min] of checks) if (n < min) problems.push(`${n} ${what}, at least ${min} required`);
  return problems;
}
