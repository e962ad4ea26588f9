/**
 * Import and export over real gRPC against the real memory and search services on a fresh
 * PostgreSQL database: the export → import → export round trip on a tenant with a rich history,
 * idempotent re-runs, per-line errors, the import content bound, the MCP memory-server, mem0 and basic-memory importers,
 * embedding jobs, paging, and tenant isolation.
 */
import { randomUUID } from "node:crypto";
import { ImportOutcome, type ArchiveService } from "@3ngram/proto/memory/v1";
import { SCOPES, type RpcMethods } from "@3ngram/rpc";
import { EMBEDDINGS_QUEUE, EMBED_MEMORY_JOB, EXTRACT_FACTS_JOB, MAX_IMPORT_BODY_BYTES, archiveRecordSchema } from "@3ngram/schema";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices, type PublicMemoryClient } from "../../../../test/support/core-services.js";
import { exportFile, importFile, importMessages } from "../../../../test/support/archive.js";
import { TEST_REDIS_URL } from "../../../../test/support/database.js";
import { rejection } from "../../../../test/support/calls.js";
import { MEM0_MEMORIES, MEM0_UNMAPPABLE } from "../../../../test/support/mem0-export.js";
import { BASIC_MEMORY_RECORDS, basicMemoryNotes } from "../../../../test/support/import-fixtures.js";

type Client = PublicMemoryClient;
interface Tenant {
  tenantId: string;
  userId: string;
}

let stack: CoreServices;
let memory: Client;
let archiveRpc: RpcMethods<typeof ArchiveService>;

const as = (t: Tenant, scopes: string[] = [SCOPES.read, SCOPES.write]) => ({ identity: { tenantId: t.tenantId, userId: t.userId, scopes } });

/** Every line of the tenant's archive, as one export stream. */
async function exportAll(t: Tenant): Promise<{ lines: string[]; cursors: Map<number, string> }> {
  return exportFile(archiveRpc, as(t, [SCOPES.read]));
}

function ndjson(records: readonly unknown[]): string {
  return records.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n") + "\n";
}

/** How many outbox jobs of each name the tenant's writes recorded. */
async function jobCounts(tenantId: string): Promise<Record<string, number>> {
  const { rows } = await stack.ownerPool.query<{ job: string; n: number }>(
    "SELECT job_name AS job, count(*)::int AS n FROM job_outbox WHERE payload->>'tenantId' = $1 GROUP BY job_name",
    [tenantId],
  );
  return Object.fromEntries(rows.map((r) => [r.job, r.n]));
}

async function counts(tenantId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of ["memories", "memory_edges", "facts", "commitments", "memory_events", "scopes"]) {
    const { rows } = await stack.ownerPool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = $1`, [tenantId]);
    out[table] = rows[0]!.n;
  }
  return out;
}

/** Keys replaced by their position, so two archives can be compared apart from ids. */
function normalise(lines: readonly string[]): unknown[] {
  const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  const memoryKeys = new Map<unknown, string>();
  const factKeys = new Map<unknown, string>();
  return records.slice(1).map((r) => {
    switch (r.kind) {
      case "memory":
        memoryKeys.set(r.key, `m${memoryKeys.size}`);
        return { ...r, key: memoryKeys.get(r.key) };
      case "edge":
        return { ...r, from: memoryKeys.get(r.from) ?? "?", to: memoryKeys.get(r.to) ?? "?" };
      case "fact":
        factKeys.set(r.key, `f${factKeys.size}`);
        return { ...r, key: factKeys.get(r.key), memoryKey: r.memoryKey === null ? null : (memoryKeys.get(r.memoryKey) ?? "?") };
      default:
        return r;
    }
  });
}

const at = (iso: string) => new Date(iso).toISOString();

beforeAll(async () => {
  stack = await startCoreServices({ label: "archive" });
  memory = await stack.publicMemoryClient();
  archiveRpc = (await stack.memoryClient()).archive;
});
afterAll(async () => {
  await stack?.close();
});

describe("export → import → export", () => {
  let source: Tenant;
  let target: Tenant;
  let first: string[];
  const marker = randomUUID().slice(0, 8);

  beforeAll(async () => {
    source = await stack.createTenant("archive source");
    target = await stack.createTenant("archive target");
    const w = as(source);

    // Scope registry: aliases, project mappings and a retrieval default.
    await memory.scopes.createScope({ name: "engineering", aliases: ["eng", "dev"] }, w);
    await memory.scopes.setScopeMappings({ name: "engineering", projects: ["atlas", "zeus"] }, w);
    await memory.scopes.createScope({ name: "ops", aliases: [] }, w);
    await memory.scopes.setScopeAliases({ name: "work", aliases: ["job"] }, w);
    await memory.scopes.setRetrievalDefault({ mode: "default", scope: "engineering" }, w);

    // Several types; a write through an alias and one through a project mapping.
    await memory.memories.remember({ memoryType: "preference", topic: "editor", content: `Prefers vim keybindings ${marker}.`, tags: ["tools", "editor"] }, w);
    await memory.memories.remember({ memoryType: "pattern", topic: "reviews", content: `Reviews happen before noon ${marker}.`, scope: "eng" }, w);
    await memory.memories.remember({ memoryType: "event", topic: "launch", content: `Atlas beta launched ${marker}.`, project: "atlas" }, w);
    await memory.memories.remember({ memoryType: "note", topic: "quotes", content: `Line with "quotes", a tab\tand unicode ✓ ${marker}.`, scope: "ops" }, w);

    // Facts whose value changes twice: three generations of one subject + predicate.
    for (const weight of ["100", "105", "110"]) {
      await memory.memories.remember(
        {
          memoryType: "fact",
          topic: "training",
          content: `Bench top set ${weight} kg ${marker}.`,
          facts: [
            { subject: "bench", predicate: "top_set.weight_kg", value: weight, confidence: 0.9 },
            { subject: `bench-${weight}`, predicate: "reps.count", value: "5" },
          ],
        },
        w,
      );
    }

    // A commitment with a due date and an owner, moved through waiting to resolved.
    const commitment = await memory.memories.remember(
      { memoryType: "commitment", topic: "report", content: `Send the quarterly report ${marker}.`, dueAt: at("2026-03-31T17:00:00.000Z"), owner: "dana" },
      w,
    );
    await memory.memories.resolve({ memoryId: commitment.memory!.id, status: "waiting" }, w);
    await memory.memories.resolve({ memoryId: commitment.memory!.id, status: "resolved" }, w);
    // An open commitment revised into another commitment (the state carries over).
    const open = await memory.memories.remember({ memoryType: "commitment", topic: "deploy", content: `Deploy atlas ${marker}.`, owner: "lee" }, w);
    await memory.memories.revise(
      {
        predecessorId: open.memory!.id,
        edgeIntent: "updates",
        memoryType: "commitment",
        topic: "deploy",
        content: `Deploy atlas on Monday ${marker}.`,
        owner: "lee",
      },
      w,
    );

    // A revise chain with both edge kinds.
    const v1 = await memory.memories.remember(
      { memoryType: "decision", topic: "database", content: `Use MySQL ${marker}.`, scope: "engineering", project: "atlas" },
      w,
    );
    const v2 = await memory.memories.revise(
      {
        predecessorId: v1.memory!.id,
        edgeIntent: "supersedes",
        memoryType: "decision",
        topic: "database",
        content: `Use PostgreSQL ${marker}.`,
        scope: "engineering",
        project: "atlas",
      },
      w,
    );
    await memory.memories.revise(
      {
        predecessorId: v2.memory!.id,
        edgeIntent: "updates",
        memoryType: "decision",
        topic: "database",
        content: `Use PostgreSQL with pgvector ${marker}.`,
        scope: "engineering",
        project: "atlas",
      },
      w,
    );

    // An archived note and a blocker resolved by archiving.
    const archived = await memory.memories.remember({ memoryType: "note", topic: "old", content: `Obsolete note ${marker}.` }, w);
    await memory.memories.archive({ memoryId: archived.memory!.id }, w);
    const blocker = await memory.memories.remember({ memoryType: "blocker", topic: "ci", content: `CI is red ${marker}.` }, w);
    await memory.memories.resolve({ memoryId: blocker.memory!.id, status: "resolved" }, w);

    first = (await exportAll(source)).lines;
  });

  it("writes a header and lines that each parse as archive records, every field present", () => {
    const header = JSON.parse(first[0]!);
    expect(header).toMatchObject({ kind: "archive", format: "3ngram", version: 1 });
    expect(Date.parse(header.exportedAt)).not.toBeNaN();
    const kinds = first.map((l) => (JSON.parse(l) as { kind: string }).kind);
    // Sections in order, every edge and fact after the memories.
    expect(kinds.join(",")).toMatch(/^archive,(scope,)+retrieval_policy,(memory,)+(edge,)+(fact,)*fact$/);
    expect(kinds.filter((k) => k === "memory")).toHaveLength(15);
    expect(kinds.filter((k) => k === "edge")).toHaveLength(3);
    expect(kinds.filter((k) => k === "fact")).toHaveLength(6);
    for (const line of first) {
      const raw = JSON.parse(line);
      const parsed = archiveRecordSchema.parse(raw);
      // Nothing is left to defaults: the parsed record is exactly what was written.
      expect(parsed).toEqual(raw);
    }
    const records = first.map((l) => JSON.parse(l));
    expect(records.filter((r) => r.kind === "scope").map((r) => r.name)).toEqual(["engineering", "ops", "personal", "work"]);
    expect(records.find((r) => r.name === "engineering")).toEqual({ kind: "scope", name: "engineering", aliases: ["eng", "dev"], projects: ["atlas", "zeus"] });
    expect(records.find((r) => r.kind === "retrieval_policy")).toEqual({ kind: "retrieval_policy", mode: "default", scope: "engineering" });
    const report = records.find((r) => r.kind === "memory" && r.topic === "report");
    expect(report.commitment).toMatchObject({ status: "resolved", owner: "dana", dueAt: "2026-03-31T17:00:00.000Z" });
    expect(report.commitment.resolvedAt).not.toBeNull();
    expect(records.find((r) => r.kind === "memory" && r.topic === "old")).toMatchObject({ status: "archived", validTo: null });
    expect(records.find((r) => r.kind === "memory" && r.topic === "ci")).toMatchObject({ status: "archived", validTo: expect.any(String) });
    expect(records.find((r) => r.kind === "memory" && r.topic === "reviews")).toMatchObject({ scope: "engineering" });
    expect(
      records
        .filter((r) => r.kind === "edge")
        .map((r) => r.edgeType)
        .sort(),
    ).toEqual(["supersedes", "updates", "updates"]);
    const generations = records.filter((r) => r.kind === "fact" && r.subject === "bench");
    expect(generations.map((f) => [f.value, f.validTo === null])).toEqual([
      ["100", false],
      ["105", false],
      ["110", true],
    ]);
  });

  it("exports the same data byte for byte twice (apart from exportedAt)", async () => {
    const again = (await exportAll(source)).lines;
    expect(again.slice(1)).toEqual(first.slice(1));
  });

  it("imports into a fresh tenant and exports the same archive again", async () => {
    const before = await counts(target.tenantId);
    const result = await importFile(archiveRpc, { format: "3ngram", ndjson: ndjson(first) }, as(target));
    expect(result.failed, JSON.stringify(result.results.filter((r) => r.outcome === "error"))).toBe(0);
    const byLine = new Map(result.results.map((r) => [r.line, r]));
    first.forEach((line, index) => {
      const kind = (JSON.parse(line) as { kind: string }).kind;
      if (kind === "memory" || kind === "edge" || kind === "fact") expect(byLine.get(index + 1)?.outcome, `line ${index + 1}`).toBe("created");
    });
    // The target already had the starter scopes: they are merged (work gains its alias), not duplicated.
    const after = await counts(target.tenantId);
    expect(after.memories! - before.memories!).toBe(15);
    expect(after.scopes).toBe(4);

    const second = (await exportAll(target)).lines;
    expect(normalise(second)).toEqual(normalise(first));
    // Keys carry over (a memory's key is the key it was imported under), so the lines are identical.
    expect(second.slice(1)).toEqual(first.slice(1));
  });

  it("keeps history readable in the new tenant: chain, commitment state, times", async () => {
    const records = first.map((l) => JSON.parse(l));
    const listed = await memory.memories.listMemories({ limit: 100 }, as(target));
    expect(listed.total).toBeGreaterThan(0);
    const v3 = records.find((r) => r.kind === "memory" && r.content.startsWith("Use PostgreSQL with pgvector"));
    const { rows } = await stack.ownerPool.query<{ id: string }>("SELECT id FROM memories WHERE tenant_id = $1 AND import_key = $2", [target.tenantId, v3.key]);
    const history = await memory.memories.getHistory({ memoryId: rows[0]!.id }, as(target));
    expect(history.lineage.map((m) => m.content)).toEqual([`Use MySQL ${marker}.`, `Use PostgreSQL ${marker}.`, `Use PostgreSQL with pgvector ${marker}.`]);
    expect(history.edges.map((e) => e.edgeType).sort()).toEqual(["supersedes", "updates"]);
    const got = await memory.memories.getMemories({ ids: [rows[0]!.id] }, as(target));
    expect(got.memories[0]!.recordedAt).toEqual(at(v3.recordedAt));
    expect(got.memories[0]!.embedded).toBe("pending");
    // asKnownAt between the second and third fact writes answers the middle generation in the new tenant too.
    const facts = records.filter((r) => r.kind === "fact" && r.subject === "bench");
    const between = new Date((Date.parse(facts[1].recordedAt) + Date.parse(facts[2].recordedAt)) / 2);
    const known = await memory.memories.getFacts(
      { subject: "bench", predicate: "top_set.weight_kg", asOf: { asKnownAt: between.toISOString() }, limit: 10 },
      as(target),
    );
    expect(known.facts.map((f) => f.value)).toEqual(["105"]);
  });

  it("creates nothing when the same import runs again", async () => {
    const before = await counts(target.tenantId);
    const result = await importFile(archiveRpc, { format: "3ngram", ndjson: ndjson(first) }, as(target));
    expect({ created: result.created, failed: result.failed }).toEqual({ created: 0, failed: 0 });
    expect(result.skipped).toBe(first.length - 1);
    expect(result.results.every((r) => r.outcome === "skipped")).toBe(true);
    // A skipped memory names the row it already is.
    expect(result.results.filter((r) => r.id !== undefined).length).toBeGreaterThan(20);
    expect(await counts(target.tenantId)).toEqual(before);
  });

  it("re-importing a tenant's own export into itself is a no-op too (keys are its ids)", async () => {
    const before = await counts(source.tenantId);
    const result = await importFile(archiveRpc, { format: "3ngram", ndjson: ndjson(first) }, as(source));
    expect({ created: result.created, failed: result.failed }).toEqual({ created: 0, failed: 0 });
    expect(await counts(source.tenantId)).toEqual(before);
  });

  it("queued one embedding job per imported memory", async () => {
    const { rows } = await stack.ownerPool.query<{ id: string }>("SELECT id FROM memories WHERE tenant_id = $1", [target.tenantId]);
    const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      // BullMQ keeps waiting job ids in <prefix>:<queue>:wait and each job's payload in its hash.
      const jobIds = await redis.lrange(`${stack.redisPrefix}:${EMBEDDINGS_QUEUE}:wait`, 0, -1);
      const queued = new Set<string>();
      for (const jobId of jobIds) {
        const data = await redis.hget(`${stack.redisPrefix}:${EMBEDDINGS_QUEUE}:${jobId}`, "data");
        const job = JSON.parse(data ?? "{}") as { tenantId?: string; memoryId?: string };
        if (job.tenantId === target.tenantId && job.memoryId) queued.add(job.memoryId);
      }
      expect([...queued].sort()).toEqual(rows.map((r) => r.id).sort());
    } finally {
      redis.disconnect();
    }
    const events = await stack.ownerPool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM memory_events WHERE tenant_id = $1 AND event_kind = 'import' AND actor_kind = 'importer' AND NOT (payload ? 'content')",
      [target.tenantId],
    );
    expect(events.rows[0]!.n).toBe(15);
  });

  it("queued no fact extraction: the archive's facts came with it, and its source reviewed what was extracted", async () => {
    expect(await jobCounts(target.tenantId)).toEqual({ [EMBED_MEMORY_JOB]: 15 });
  });
});

describe("per-line results", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await stack.createTenant("archive lines");
  });

  it("imports the rest of a file around bad lines and names each one's field", async () => {
    const k = randomUUID();
    const file = ndjson([
      { kind: "memory", key: `${k}-1`, memoryType: "note", topic: "first", content: `first good line ${k}` },
      { kind: "memory", key: `${k}-2`, memoryType: "gossip", topic: "bad", content: `bad type ${k}` },
      "{not json",
      { kind: "memory", key: `${k}-3`, memoryType: "note", topic: "third", content: `third good line ${k}`, colour: "red" },
      { kind: "edge", from: `${k}-1`, to: "no-such-key", edgeType: "supersedes" },
      { kind: "fact", key: `${k}-f`, subject: "s", predicate: "p", value: "v", confidence: 2 },
      { kind: "memory", key: `${k}-4`, memoryType: "note", topic: "fourth", content: `fourth good line ${k}`, recordedAt: "2999-01-01T00:00:00Z" },
      { kind: "teleport" },
      { kind: "memory", key: `${k}-5`, memoryType: "note", topic: "last", content: `last good line ${k}` },
    ]);
    const result = await importFile(archiveRpc, { format: "3ngram", ndjson: file }, as(tenant));
    expect(result.results.map((r) => [r.line, r.outcome, r.reason ?? null])).toEqual([
      [1, "created", null],
      [2, "error", "invalid_input"],
      [3, "error", "invalid_input"],
      [4, "error", "invalid_input"],
      [5, "error", "not_found"],
      [6, "error", "invalid_input"],
      [7, "error", "invalid_input"],
      [8, "error", "invalid_input"],
      [9, "created", null],
    ]);
    const message = (line: number) => result.results.find((r) => r.line === line)!.message!;
    expect(message(2)).toMatch(/^memoryType: /);
    expect(message(3)).toMatch(/JSON/);
    expect(message(4)).toMatch(/colour/);
    expect(message(5)).toMatch(/^to: /);
    expect(message(6)).toMatch(/^confidence: /);
    expect(message(7)).toMatch(/^recordedAt: .*future/);
    expect(message(8)).toMatch(/^kind/);
    // Messages never echo content.
    for (const r of result.results) expect(r.message ?? "").not.toContain(k);
    expect({ created: result.created, skipped: result.skipped, failed: result.failed }).toEqual({ created: 2, skipped: 0, failed: 7 });
  });

  it("keeps historical times and refuses a live duplicate with the existing id (closed rows are exempt)", async () => {
    const content = `Historical memory ${randomUUID()}`;
    const live = await memory.memories.remember({ memoryType: "note", topic: "live", content }, as(tenant));
    const result = await importFile(
      archiveRpc,
      {
        format: "3ngram",
        ndjson: ndjson([
          { kind: "memory", key: "dup-live", memoryType: "note", topic: "dup", content },
          {
            kind: "memory",
            key: "dup-closed",
            memoryType: "note",
            topic: "dup",
            content,
            validFrom: "2020-01-01T00:00:00.000Z",
            validTo: "2021-01-01T00:00:00.000Z",
            recordedAt: "2020-02-01T10:11:12.345Z",
            closedRecordedAt: "2021-01-02T00:00:00.000Z",
          },
        ]),
      },
      as(tenant),
    );
    expect(result.results[0]).toMatchObject({ line: 1, outcome: "error", reason: "duplicate_memory", id: live.memory!.id });
    expect(result.results[1]).toMatchObject({ line: 2, outcome: "created" });
    const got = await memory.memories.getMemories({ ids: [result.results[1]!.id!] }, as(tenant));
    expect(got.memories[0]).toMatchObject({
      validFrom: at("2020-01-01T00:00:00.000Z"),
      validTo: at("2021-01-01T00:00:00.000Z"),
      recordedAt: at("2020-02-01T10:11:12.345Z"),
    });
    const { rows } = await stack.ownerPool.query("SELECT closed_recorded_at FROM memories WHERE id = $1", [result.results[1]!.id]);
    expect(rows[0].closed_recorded_at.toISOString()).toBe("2021-01-02T00:00:00.000Z");
  });

  it("imports content of 200 000 and 262 144 characters and refuses 262 145", async () => {
    const body = (n: number) => {
      const head = `${randomUUID()} `;
      return head + "lorem ipsum ".repeat(Math.ceil(n / 12)).slice(0, n - head.length);
    };
    const [c200k, cMax, cOver] = [body(200_000), body(262_144), body(262_145)];
    expect([c200k.length, cMax.length, cOver.length]).toEqual([200_000, 262_144, 262_145]);
    const result = await importFile(
      archiveRpc,
      {
        format: "3ngram",
        ndjson: ndjson([
          { kind: "memory", key: "big-200k", memoryType: "note", topic: "big", content: c200k },
          { kind: "memory", key: "big-max", memoryType: "note", topic: "big", content: cMax },
          { kind: "memory", key: "big-over", memoryType: "note", topic: "big", content: cOver },
        ]),
      },
      as(tenant),
    );
    expect(result.results.map((r) => r.outcome)).toEqual(["created", "created", "error"]);
    expect(result.results[2]).toMatchObject({ reason: "invalid_input", message: expect.stringMatching(/^content: /) });
    const got = await memory.memories.getMemories({ ids: [result.results[0]!.id!], maxContentChars: 65_536 }, as(tenant));
    expect(got.memories[0]).toMatchObject({ contentLength: 200_000, truncated: true });
    const { rows } = await stack.ownerPool.query<{ content: string }>("SELECT content FROM memories WHERE id = $1", [result.results[1]!.id]);
    expect(rows[0]!.content).toBe(cMax);
  });

  it("refuses the whole import for an archive version it cannot read, and a bad format", async () => {
    const before = await counts(tenant.tenantId);
    const err = await rejection(
      importFile(
        archiveRpc,
        {
          format: "3ngram",
          ndjson: ndjson([
            { kind: "archive", format: "3ngram", version: 2, exportedAt: "2026-01-01T00:00:00.000Z" },
            { kind: "memory", key: "v2", memoryType: "note", topic: "t", content: `future format ${randomUUID()}` },
          ]),
        },
        as(tenant),
      ),
    );
    expect(err.reason).toBe("invalid_input");
    expect(err.message).toMatch(/^line 1: version: /);
    expect(await counts(tenant.tenantId)).toEqual(before);
    const format = await rejection(archiveRpc.import(importMessages({ format: "csv", ndjson: "" }), as(tenant)));
    expect(format.details.field).toBe("options.format");
  });

  it("merges scopes and reports a conflicting one as an error line", async () => {
    const w = as(tenant);
    await memory.scopes.createScope({ name: "research", aliases: ["rnd"] }, w);
    const result = await importFile(
      archiveRpc,
      {
        format: "3ngram",
        ndjson: ndjson([
          { kind: "scope", name: "research", aliases: ["lab"], projects: ["quark"] },
          { kind: "scope", name: "science", aliases: ["rnd"] },
          { kind: "scope", name: "personal" },
          { kind: "retrieval_policy", mode: "require" },
          { kind: "retrieval_policy", mode: "default", scope: "research" },
        ]),
      },
      w,
    );
    expect(result.results.map((r) => [r.outcome, r.reason ?? null])).toEqual([
      ["created", null],
      ["error", "conflict"],
      ["skipped", null],
      ["created", null],
      ["error", "conflict"],
    ]);
    expect(result.results[1]!.message).toMatch(/^aliases: rnd is already the alias of scope research/);
    const scopes = await memory.scopes.listScopes({}, w);
    expect(scopes.scopes.find((s) => s.name === "research")).toMatchObject({ aliases: ["rnd", "lab"], projects: ["quark"] });
    expect(scopes.scopes.map((s) => s.name)).not.toContain("science");
    expect(scopes.policy).toMatchObject({ mode: "require" });
  });

  it("brings a renamed starter scope over as it was renamed, with the policy that names it", async () => {
    const source = await stack.createTenant("archive renamed source");
    const target = await stack.createTenant("archive renamed target");
    await memory.memories.remember({ memoryType: "note", topic: "before", content: `under the old name ${randomUUID()}`, scope: "work" }, as(source));
    await memory.scopes.renameScope({ name: "work", newName: "job" }, as(source));
    await memory.scopes.setRetrievalDefault({ mode: "default", scope: "job" }, as(source));
    const exported = (await exportAll(source)).lines;

    // The target, like every new tenant, starts with a bare "work" scope: the archive's old name.
    const result = await importFile(archiveRpc, { format: "3ngram", ndjson: `${exported.slice(1).join("\n")}\n` }, as(target));
    expect(result.results.filter((r) => r.outcome === "error")).toEqual([]);
    const scopes = await memory.scopes.listScopes({}, as(target));
    expect(scopes.scopes.map((s) => [s.name, s.aliases])).toEqual([
      ["job", ["work"]],
      ["personal", []],
    ]);
    expect(scopes.policy).toMatchObject({ mode: "default", scope: "job" });
    // Export, import, export: the same lines.
    expect(normalise((await exportAll(target)).lines)).toEqual(normalise(exported));
  });

  it("refuses import to a read-only caller", async () => {
    const err = await rejection(importFile(archiveRpc, { format: "3ngram", ndjson: "" }, as(tenant, [SCOPES.read])));
    expect(err.reason).toBe("insufficient_scope");
  });
});

describe("the import stream", () => {
  let tenant: Tenant;
  type Message = ReturnType<typeof importMessages> extends Iterable<infer M> ? M : never;
  const options: Message = { part: { case: "options", value: { format: "3ngram" } } };
  const piece = (value: string): Message => ({ part: { case: "ndjson", value } });
  const end: Message = { part: { case: "end", value: true } };
  const memoryLine = (i: number) => JSON.stringify({ kind: "memory", key: `s-${i}`, memoryType: "note", topic: "stream", content: `streamed ${i}` });

  beforeAll(async () => {
    tenant = await stack.createTenant("archive stream");
  });

  it("numbers lines across pieces that split them anywhere, and reports the Nth bad record alone", async () => {
    const records = Array.from({ length: 300 }, (_, i) => (i === 206 ? '{"kind":"memory","key":"s-bad","memoryType":"note","topic":""}' : memoryLine(i)));
    // 97-character pieces: almost every line is split between two (or three) messages.
    const result = await archiveRpc.import(importMessages({ format: "3ngram", ndjson: `${records.join("\r\n")}\r\n` }, 97), {
      ...as(tenant),
      deadlineMs: 120_000,
    });
    expect(result.results).toHaveLength(300);
    expect(result.results.map((r) => r.line)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    // The raw answer, as any gRPC client reads it: outcomes are ImportOutcome numbers.
    expect(result.results.filter((r) => r.outcome !== ImportOutcome.CREATED)).toEqual([
      expect.objectContaining({ line: 207, outcome: ImportOutcome.ERROR, reason: "invalid_input", message: expect.stringMatching(/^topic: /) }),
    ]);
    expect({ created: result.created, failed: result.failed }).toEqual({ created: 299, failed: 1 });
  });

  it("refuses a stream whose messages are out of place, naming the field, and stores nothing of it", async () => {
    const before = await counts(tenant.tenantId);
    const good = piece(`${memoryLine(1000)}\n${memoryLine(1001)}\n`);
    const cases: Array<[Message[], string]> = [
      [[good, end], "options"],
      [[options, good, options, end], "options"],
      [[options, good, { part: { case: undefined } }, end], "ndjson"],
      [[], "options"],
      [[{ part: { case: "options", value: { format: "csv" } } }, good, end], "options.format"],
      // A half-close is not enough: without the end message the file may be cut short.
      [[options, good], "end"],
      [[options, good, end, good], "end"],
      [[options, good, { part: { case: "end", value: false } }], "end"],
    ];
    for (const [messages, field] of cases) {
      const err = await rejection(archiveRpc.import(messages, as(tenant)));
      expect([err.reason, err.details.field], JSON.stringify(messages)).toEqual(["invalid_input", field]);
    }
    expect(await counts(tenant.tenantId)).toEqual(before);
  });

  it("stores nothing of a stream its client cancels before the end message", async () => {
    const before = await counts(tenant.tenantId);
    const abort = new AbortController();
    let sent = 0;
    async function* cut(): AsyncGenerator<Message> {
      yield options;
      yield piece(`${memoryLine(3000)}\n${memoryLine(3001)}\n`);
      sent = 2;
      // The client gives up before the rest of the file (and its end) is sent. grpc-js can show
      // the server this cancel as an ordinary end of stream first, which is why the end message exists.
      await new Promise((resolve) => setTimeout(resolve, 200));
      yield piece(`${memoryLine(3002)}\n`);
      yield end;
    }
    const call = archiveRpc.import(cut(), { ...as(tenant), signal: abort.signal });
    while (sent < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 50));
    abort.abort();
    await expect(call).rejects.toBeInstanceOf(Error);
    // Long enough for a wrongly started import to have stored its first records.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await counts(tenant.tenantId)).toEqual(before);
  });

  it("refuses a stream past the size bound without storing the records before it", async () => {
    const before = await counts(tenant.tenantId);
    function* huge(): Generator<Message> {
      yield options;
      yield piece(`${memoryLine(2000)}\n`);
      // Blank lines: cheap to send and to read, and they count towards the bound like any byte.
      const blank = "\n".repeat(1024 * 1024);
      for (let sent = 0; sent <= MAX_IMPORT_BODY_BYTES; sent += blank.length) yield piece(blank);
    }
    const err = await rejection(archiveRpc.import(huge(), { ...as(tenant), deadlineMs: 60_000 }));
    expect([err.reason, err.details.field]).toEqual(["invalid_input", "ndjson"]);
    expect(await counts(tenant.tenantId)).toEqual(before);
  });
});

describe("the MCP memory-server importer", () => {
  let tenant: Tenant;
  const sample = [
    { type: "entity", name: "Ada_Lovelace", entityType: "person", observations: ["Wrote the first published algorithm", "Worked with Charles Babbage"] },
    { type: "entity", name: "Analytical_Engine", entityType: "machine", observations: ["Designed by Charles Babbage in 1837"] },
    { type: "relation", from: "Ada_Lovelace", to: "Analytical_Engine", relationType: "wrote_notes_on" },
    { type: "relation", from: "Analytical_Engine", to: "Charles_Babbage", relationType: "designed_by" },
    { type: "entity", name: "Empty", entityType: "thing", observations: [""] },
    { type: "gossip", name: "x" },
  ];

  beforeAll(async () => {
    tenant = await stack.createTenant("archive mcp");
  });

  it("stores one fact memory per observation and one fact per relation", async () => {
    const result = await importFile(archiveRpc, { format: "mcp-memory", ndjson: ndjson(sample) }, as(tenant));
    expect(result.results.map((r) => [r.line, r.outcome, r.reason ?? null])).toEqual([
      [1, "created", null],
      [1, "created", null],
      [2, "created", null],
      [3, "created", null],
      [4, "created", null],
      [5, "error", "invalid_input"],
      [6, "error", "invalid_input"],
    ]);
    expect(result.results[5]!.message).toMatch(/^content: /);
    expect(result.results[6]!.message).toMatch(/^type/);

    const listed = await memory.memories.listMemories({ memoryTypes: ["fact"], limit: 100 }, as(tenant));
    expect(listed.memories.map((m) => [m.topic, m.tags]).sort()).toEqual([
      ["Ada_Lovelace", ["person"]],
      ["Ada_Lovelace", ["person"]],
      ["Analytical_Engine", ["machine"]],
    ]);
    const { rows } = await stack.ownerPool.query<{ import_key: string }>("SELECT import_key FROM memories WHERE tenant_id = $1 ORDER BY import_key", [
      tenant.tenantId,
    ]);
    expect(rows.map((r) => r.import_key)).toEqual(["mcp:Ada_Lovelace:0", "mcp:Ada_Lovelace:1", "mcp:Analytical_Engine:0"]);

    const facts = await memory.memories.getFacts({ subject: "Ada_Lovelace", limit: 10 }, as(tenant));
    expect(facts.facts.map((f) => [f.predicate, f.value])).toEqual([["wrote_notes_on", "Analytical_Engine"]]);
    const designed = await memory.memories.getFacts({ subject: "Analytical_Engine", predicate: "designed_by", limit: 10 }, as(tenant));
    expect(designed.facts.map((f) => f.value)).toEqual(["Charles_Babbage"]);
    // Another server's observations carry no reviewed facts of ours: each is read for facts like a remembered memory.
    expect(await jobCounts(tenant.tenantId)).toEqual({ [EMBED_MEMORY_JOB]: 3, [EXTRACT_FACTS_JOB]: 3 });
  });

  it("finds the imported observations through search", async () => {
    const search = await stack.publicSearchClient();
    const found = await search.search({ query: "published algorithm", limit: 5 }, as(tenant, [SCOPES.read]));
    expect(found.hits.map((h) => ("content" in h ? h.content : undefined))).toContain("Wrote the first published algorithm");
  });

  it("skips everything on a second run", async () => {
    const before = await counts(tenant.tenantId);
    const result = await importFile(archiveRpc, { format: "mcp-memory", ndjson: ndjson(sample.slice(0, 4)) }, as(tenant));
    expect(result.results.map((r) => r.outcome)).toEqual(["skipped", "skipped", "skipped", "skipped", "skipped"]);
    expect(await counts(tenant.tenantId)).toEqual(before);
  });
});

describe("the mem0 importer", () => {
  let tenant: Tenant;
  // A compact get_all answer on the first line, a single memory on the second, then what cannot be mapped.
  const file = ndjson([{ results: MEM0_MEMORIES.slice(0, 2) }, MEM0_MEMORIES[2], ...MEM0_UNMAPPABLE.map((u) => u.record)]);

  beforeAll(async () => {
    tenant = await stack.createTenant("archive mem0");
  });

  it("stores each memory typed, tagged and dated, and names the field of each one it cannot map", async () => {
    const result = await importFile(archiveRpc, { format: "mem0", ndjson: file }, as(tenant));
    expect(result.results.map((r) => [r.line, r.outcome, r.reason ?? null])).toEqual([
      [1, "created", null],
      [1, "created", null],
      [2, "created", null],
      [3, "error", "invalid_input"],
      [4, "error", "invalid_input"],
      [5, "error", "invalid_input"],
      [6, "error", "invalid_input"],
    ]);
    expect(result).toMatchObject({ format: "mem0", created: 3, skipped: 0, failed: 4 });
    MEM0_UNMAPPABLE.forEach((u, i) => expect(result.results[3 + i]!.message).toMatch(new RegExp(`^${u.field}: `)));

    const ids = result.results.slice(0, 3).map((r) => r.id!);
    const got = await memory.memories.getMemories({ ids }, as(tenant));
    const byId = new Map(got.memories.map((m) => [m.id, m]));
    expect(ids.map((id) => byId.get(id)).map((m) => [m?.memoryType, m?.topic, m?.content, m?.tags, m?.validFrom, m?.scope])).toEqual([
      ["fact", "food", MEM0_MEMORIES[0]!.memory, ["mem0-user:alice", "food", "habits"], at("2024-07-20T08:23:45.123Z"), "personal"],
      [
        "decision",
        "atlas ledger",
        MEM0_MEMORIES[1]!.memory,
        ["mem0-agent:planner", "mem0-run:run-42", "atlas", "databases"],
        at("2025-02-03T10:00:00.000Z"),
        "personal",
      ],
      ["fact", "mem0", MEM0_MEMORIES[2]!.memory, ["mem0-agent:deployer"], at("2025-03-01T12:30:00.500Z"), "personal"],
    ]);
    const { rows } = await stack.ownerPool.query<{ import_key: string }>("SELECT import_key FROM memories WHERE tenant_id = $1 ORDER BY import_key", [
      tenant.tenantId,
    ]);
    expect(rows.map((r) => r.import_key)).toEqual(MEM0_MEMORIES.map((m) => `mem0:${m.id}`).sort());
  });

  it("stores nothing twice when the same file is imported again", async () => {
    const before = await counts(tenant.tenantId);
    const result = await importFile(archiveRpc, { format: "mem0", ndjson: file }, as(tenant));
    expect(result).toMatchObject({ created: 0, skipped: 3, failed: 4 });
    expect(result.results.slice(0, 3).map((r) => r.outcome)).toEqual(["skipped", "skipped", "skipped"]);
    expect(await counts(tenant.tenantId)).toEqual(before);
  });
});

describe("the basic-memory importer", () => {
  let tenant: Tenant;
  const notes = basicMemoryNotes();
  const unreadable = [
    { line: ["not", "a", "note"], field: "line" },
    { line: { path: "no-content.md" }, field: "content" },
    { line: { path: "bad-yaml.md", content: "---\ntitle: [unclosed\n---\n- [fact] Never read" }, field: "content" },
    { line: { path: "empty.md", content: "---\ntitle: Empty\n---\n\n## Observations\n" }, field: "content" },
  ];
  const file = ndjson([...notes.map((n) => ({ ...n, project: "atlas" })), ...unreadable.map((u) => u.line)]);

  beforeAll(async () => {
    tenant = await stack.createTenant("archive basic-memory");
  });

  it("stores observations and prose as typed memories and relations as facts, and names the field of each note it cannot read", async () => {
    const result = await importFile(archiveRpc, { format: "basic-memory", ndjson: file }, as(tenant));
    const records = BASIC_MEMORY_RECORDS.memories + BASIC_MEMORY_RECORDS.facts;
    expect(result).toMatchObject({ format: "basic-memory", created: records, skipped: 0, failed: unreadable.length });
    const errors = result.results.filter((r) => r.outcome === "error");
    expect(errors.map((r) => [r.line, r.reason])).toEqual(unreadable.map((_, i) => [notes.length + 1 + i, "invalid_input"]));
    unreadable.forEach((u, i) => expect(errors[i]!.message).toMatch(new RegExp(`^${u.field}: `)));

    const created = result.results.filter((r) => r.outcome === "created").map((r) => r.id!);
    const got = await memory.memories.getMemories({ ids: created }, as(tenant));
    const byContent = new Map(got.memories.map((m) => [m.content, m]));
    expect(got.memories).toHaveLength(BASIC_MEMORY_RECORDS.memories);
    expect(byContent.get("Chose PostgreSQL for the ledger because it needs transactions #postgres (reviewed by the platform team)")).toMatchObject({
      memoryType: "decision",
      topic: "Ledger Database",
      project: "atlas",
      tags: ["postgres", "atlas", "databases", "basic-memory-folder:decisions"],
    });
    // A category that names none of our types becomes a fact tagged with it.
    expect(byContent.get("Vacuum tuning is still untested #postgres")).toMatchObject({
      memoryType: "fact",
      tags: ["risk", "postgres", "atlas", "databases", "basic-memory-folder:decisions"],
    });
    expect(byContent.get("Reviews happen before noon #process")).toMatchObject({ memoryType: "preference", topic: "Team Preferences" });
    expect(byContent.get("Ship the ledger beta by the end of March")).toMatchObject({
      memoryType: "commitment",
      tags: ["atlas", "basic-memory-folder:specs/ledger"],
    });
    // The prose: typed by the note's type when it is ours, else a note tagged with it.
    expect(byContent.get("What the ledger must do before the beta.")).toMatchObject({
      memoryType: "note",
      tags: ["atlas", "basic-memory-folder:specs/ledger", "spec"],
    });
    expect([...byContent.keys()].some((c) => c.startsWith("We compared PostgreSQL and SQLite"))).toBe(true);

    const implemented = await memory.memories.getFacts({ subject: "Ledger Database", predicate: "implements", limit: 10 }, as(tenant));
    expect(implemented.facts.map((f) => f.value)).toEqual(["Ledger Requirements"]);
    const partOf = await memory.memories.getFacts({ subject: "Ledger Requirements", limit: 10 }, as(tenant));
    expect(partOf.facts.map((f) => [f.predicate, f.value])).toEqual([["part_of", "Atlas Project"]]);
    const { rows } = await stack.ownerPool.query<{ import_key: string }>("SELECT import_key FROM memories WHERE tenant_id = $1", [tenant.tenantId]);
    expect(rows.every((r) => r.import_key.startsWith("basic-memory:atlas/"))).toBe(true);
  });

  it("stores nothing twice when the same notes are imported again", async () => {
    const before = await counts(tenant.tenantId);
    const result = await importFile(archiveRpc, { format: "basic-memory", ndjson: file }, as(tenant));
    expect(result).toMatchObject({ created: 0, skipped: BASIC_MEMORY_RECORDS.memories + BASIC_MEMORY_RECORDS.facts, failed: unreadable.length });
    expect(await counts(tenant.tenantId)).toEqual(before);
  });
});

describe("streaming and isolation", () => {
  let big: Tenant;
  let other: Tenant;
  let exported: { lines: string[]; cursors: Map<number, string> };

  beforeAll(async () => {
    big = await stack.createTenant("archive big");
    other = await stack.createTenant("archive other");
    const records: unknown[] = [];
    for (let i = 0; i < 600; i += 1)
      records.push({ kind: "memory", key: `small-${i}`, memoryType: "note", topic: "small", content: `small memory number ${i}` });
    for (let i = 0; i < 12; i += 1) {
      records.push({ kind: "memory", key: `large-${i}`, memoryType: "note", topic: "large", content: `${i} ${randomUUID()} ${"z".repeat(199_000)}` });
    }
    // ~2.4 MB in 612 transactions: this checks paging, not speed, so the call gets a deadline a
    // loaded machine cannot hit (the 10 s default did, with the full suite running beside it).
    const result = await importFile(archiveRpc, { format: "3ngram", ndjson: ndjson(records) }, { ...as(big), deadlineMs: 120_000 });
    expect(result.created).toBe(612);
    await memory.memories.remember({ memoryType: "note", topic: "other", content: "Belongs to the other tenant only." }, as(other));

    exported = await exportAll(big);
  });

  it("streams every record once, with a resume cursor at least every 500 records", () => {
    const keys = exported.lines
      .map((l) => JSON.parse(l) as { kind: string; key?: string })
      .filter((r) => r.kind === "memory")
      .map((r) => r.key);
    expect(keys).toHaveLength(612);
    expect(new Set(keys).size).toBe(612);
    // More records than one old page held, so the stream crossed page (transaction) boundaries.
    const marks = [...exported.cursors.keys()];
    expect(marks.length).toBeGreaterThanOrEqual(2);
    for (const [i, at] of marks.entries()) expect(at - (marks[i - 1] ?? -1)).toBeLessThanOrEqual(500);
    // The last record carries none: the end of the stream says the archive is done.
    expect(exported.cursors.has(exported.lines.length - 1)).toBe(false);
  });

  it("resumes from a cursor right after its record, without repeats or gaps", async () => {
    const [at, cursor] = [...exported.cursors.entries()][1]!;
    const rest = await exportFile(archiveRpc, as(big, [SCOPES.read]), cursor);
    expect(rest.lines).toEqual(exported.lines.slice(at + 1));
  });

  it("refuses a forged cursor and another tenant's cursor alike", async () => {
    const [, cursor] = [...exported.cursors.entries()][1]!;
    const foreign = await rejection(exportFile(archiveRpc, as(other, [SCOPES.read]), cursor));
    const forged = await rejection(exportFile(archiveRpc, as(other, [SCOPES.read]), "bm90LWEtY3Vyc29y"));
    expect([foreign.reason, foreign.details.field, foreign.message]).toEqual([forged.reason, forged.details.field, forged.message]);
    expect(forged.reason).toBe("invalid_input");
    expect(forged.details.field).toBe("cursor");
  });

  it("never exports or touches another tenant's rows", async () => {
    const mine = (await exportAll(big)).lines.join("\n");
    expect(mine).not.toContain("Belongs to the other tenant");
    const theirs = (await exportAll(other)).lines;
    expect(theirs.filter((l) => l.includes('"kind":"memory"'))).toHaveLength(1);

    // Keys that are the other tenant's memory ids resolve to nothing here: an edge is refused and a
    // memory with that key is created in this tenant, never matched against theirs.
    const { rows } = await stack.ownerPool.query<{ id: string }>("SELECT id FROM memories WHERE tenant_id = $1", [other.tenantId]);
    const foreignId = rows[0]!.id;
    const before = await counts(other.tenantId);
    const result = await importFile(
      archiveRpc,
      {
        format: "3ngram",
        ndjson: ndjson([
          { kind: "edge", from: "small-1", to: foreignId, edgeType: "extends" },
          { kind: "fact", key: "foreign-fact", memoryKey: foreignId, subject: "s", predicate: "p", value: "v" },
          { kind: "memory", key: foreignId, memoryType: "note", topic: "mine", content: "Mine, under a key that is their id." },
        ]),
      },
      as(big),
    );
    expect(result.results.map((r) => [r.outcome, r.reason ?? null])).toEqual([
      ["error", "not_found"],
      ["error", "not_found"],
      ["created", null],
    ]);
    expect(result.results[2]!.id).not.toBe(foreignId);
    expect(await counts(other.tenantId)).toEqual(before);
  });
});
