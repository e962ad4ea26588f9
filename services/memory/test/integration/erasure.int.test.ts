/**
 * Erasure against the real memory and search services on a fresh PostgreSQL database: a tenant
 * whose secret was planted in every place text can reach (content, topic, tags, facts written and
 * accepted from proposals, a fact about the subject no memory asserted, proposal rationales, a
 * commitment owner, an import key, a retry key, the embedding and the full-text vector) is erased by subject,
 * by ids and by topic. Afterwards a sweep of every text, jsonb and tsvector column of every table
 * (found through information_schema, not listed here) finds none of it, while the supersession
 * chain, the audit trail, export/import and the grants behave as docs/erasure.md says.
 */
import { execFile } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { ErasureReason, type ArchiveService } from "@3ngram/proto/memory/v1";
import { SCOPES, type CallOptions, type RpcMethods } from "@3ngram/rpc";
import { ERASED_MARKER } from "@3ngram/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rejection, reader, writer, type TestTenant } from "../../../../test/support/calls.js";
import { startCoreServices, type CoreServices, type PublicMemoryClient } from "../../../../test/support/core-services.js";
import { exportFile, importFile } from "../../../../test/support/archive.js";
import { REPO_ROOT } from "../../../../test/support/processes.js";

type Client = PublicMemoryClient;
type RememberInit = Parameters<Client["memories"]["remember"]>[0];
type EraseInit = MessageInitShape<(typeof ArchiveService)["method"]["erase"]["input"]>;

let stack: CoreServices;
let memory: Client;
/** ArchiveService's proto messages as they are: whole files in and out, and what a public value cannot say (a number no enum holds). */
let archiveRpc: RpcMethods<typeof ArchiveService>;
let tenantA: TestTenant;
let tenantB: TestTenant;
let tenantC: TestTenant;

const eraser = (t: Pick<TestTenant, "tenantId" | "userId">): CallOptions => ({
  identity: { tenantId: t.tenantId, userId: t.userId, scopes: [SCOPES.read, SCOPES.erase], actor: "user_api" },
});
const consolidator = (t: TestTenant): CallOptions => ({ identity: { tenantId: t.tenantId, scopes: [SCOPES.internalConsolidate] } });
const embedJob = (t: TestTenant): CallOptions => ({ identity: { tenantId: t.tenantId, scopes: [SCOPES.internalEmbed] } });

/** Lower-case letters and digits: PostgreSQL's parser keeps such a word whole, so the full-text vector holds it as is. */
const token = (label: string) => `zq${label}${randomBytes(5).toString("hex")}`;
const T = {
  content: token("content"),
  topic: token("topic"),
  tag: token("tag"),
  subject: token("subject"),
  value: token("value"),
  extracted: token("extracted"),
  orphan: token("orphan"),
  owner: token("owner"),
  key: token("key"),
  rationale: token("rationale"),
  retry: token("retry"),
};
const NEEDLES = Object.values(T);

interface MemoryFields {
  memoryType: string;
  content: string;
  topic?: string;
  scope?: string;
  tags?: string[];
  owner?: string;
  facts?: Array<{ subject: string; predicate: string; value: string }>;
  idempotencyKey?: string;
}

async function remember(t: TestTenant, fields: MemoryFields): Promise<string> {
  const request = { topic: "erasure test", ...fields } as RememberInit;
  const out = await memory.memories.remember(request, writer(t));
  return out.memory!.id;
}

async function ownerRows<R>(sql: string, params: unknown[] = []): Promise<R[]> {
  return (await stack.ownerPool.query(sql, params)).rows as R[];
}

interface Sweep {
  tables: number;
  columns: string[];
  /** "table.column: needle" for every match. */
  hits: string[];
}

/**
 * Every column of every base table in the public schema whose type can hold text — text,
 * varchar, char, their arrays, json, jsonb, tsvector — searched (as its text form) for every
 * needle. The owner is a superuser, so row-level security hides nothing from it.
 */
async function sweep(needles: readonly string[]): Promise<Sweep> {
  const columns = await ownerRows<{ table: string; column: string }>(
    `SELECT c.table_name AS table, c.column_name AS column
       FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'
        AND (c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'tsvector')
             OR (c.data_type = 'ARRAY' AND c.udt_name IN ('_text', '_varchar', '_bpchar')))
      ORDER BY 1, 2`,
  );
  const hits: string[] = [];
  for (const { table, column } of columns) {
    const [row] = await ownerRows<{ found: string[] }>(
      `SELECT coalesce(array_agg(n.needle), '{}') AS found
         FROM unnest($1::text[]) AS n (needle)
        WHERE EXISTS (SELECT 1 FROM "${table}" WHERE "${column}"::text ILIKE '%' || n.needle || '%')`,
      [needles],
    );
    for (const needle of row!.found) hits.push(`${table}.${column}: ${needle}`);
  }
  return { tables: new Set(columns.map((c) => c.table)).size, columns: columns.map((c) => `${c.table}.${c.column}`), hits };
}

const ids: Record<string, string> = {};

beforeAll(async () => {
  stack = await startCoreServices({ label: "memory-erasure" });
  memory = await stack.publicMemoryClient();
  archiveRpc = (await stack.memoryClient()).archive;
  tenantA = await stack.createTenant("erasure a");
  tenantB = await stack.createTenant("erasure b");
  tenantC = await stack.createTenant("erasure c");

  // A predecessor holding the secret, corrected by a successor that does not.
  ids.predecessor = await remember(tenantA, { memoryType: "decision", content: `The vault passphrase is ${T.content}.`, scope: "work" });
  const revised = await memory.memories.revise(
    {
      predecessorId: ids.predecessor,
      memoryType: "decision",
      topic: "erasure test",
      content: "The vault passphrase was rotated; ask the owner.",
      scope: "work",
    },
    writer(tenantA),
  );
  ids.successor = revised.memory!.id;

  // The richest memory: secret in content, topic, tags and a fact; a fact proposal accepted, one rejected quoting it.
  ids.rich = await remember(tenantA, {
    memoryType: "fact",
    topic: `Vault ${T.topic}`,
    content: `The staging vault opens with ${T.content}; its keeper is ${T.subject}.`,
    tags: [T.tag],
    facts: [{ subject: T.subject, predicate: "vault.passphrase", value: T.value }],
    // A client's retry key is its own text (and its request hash hashes the content): it goes too.
    idempotencyKey: T.retry,
  });
  const proposed = await memory.proposals.createFactProposals(
    {
      memoryId: ids.rich,
      extractor: "llm/test",
      facts: [
        { subject: `${T.subject} backup`, predicate: "vault.code", value: T.extracted, rationale: `quoted "${T.content}"` },
        { subject: `${T.subject} spare`, predicate: "vault.code", value: `${T.extracted} spare` },
      ],
    },
    consolidator(tenantA),
  );
  await memory.proposals.acceptProposal({ proposalId: proposed.createdIds[0]! }, writer(tenantA));
  await memory.proposals.rejectProposal({ proposalId: proposed.createdIds[1]!, rationale: `not ${T.rationale}` }, writer(tenantA));

  // A consolidation proposal between it and a memory that stays, decided with a rationale quoting the secret.
  ids.bystander = await remember(tenantA, { memoryType: "fact", content: "The production vault is in another region." });
  const edge = await memory.proposals.createConsolidationProposals(
    { proposals: [{ fromId: ids.rich, toId: ids.bystander, edgeType: "extends", similarity: 0.8, rationale: `both mention ${T.rationale}` }] },
    consolidator(tenantA),
  );
  await memory.proposals.rejectProposal({ proposalId: edge.createdIds[0]!, rationale: `unrelated to ${T.content}` }, writer(tenantA));

  // A commitment whose owner names the secret keeper.
  ids.commitment = await remember(tenantA, { memoryType: "commitment", content: `Rotate ${T.content} by Friday.`, owner: T.owner });

  // Imported: the import key spells a name out, and a fact about the subject that no memory asserted.
  const imported = await importFile(
    archiveRpc,
    {
      format: "3ngram",
      ndjson: [
        JSON.stringify({
          kind: "memory",
          key: `mcp:${T.key}:0`,
          memoryType: "note",
          topic: `Imported ${T.topic}`,
          content: `Imported note about ${T.content}.`,
        }),
        JSON.stringify({ kind: "fact", key: `rel:${T.key}`, subject: T.subject, predicate: "knows", value: T.orphan }),
      ].join("\n"),
    },
    writer(tenantA),
  );
  expect(imported.failed).toBe(0);
  ids.imported = imported.results[0]!.id!;
});

afterAll(async () => {
  await stack?.close();
});

describe("before erasure", () => {
  it("the sweep finds every planted needle (so finding none later means something)", async () => {
    const before = await sweep(NEEDLES);
    const found = new Set(before.hits.map((h) => h.split(": ")[1]));
    expect([...found].sort()).toEqual([...NEEDLES].sort());
    for (const place of [
      "memories.content",
      "memories.topic",
      "memories.tags",
      "memories.search_tsv",
      "memories.import_key",
      "facts.subject",
      "facts.value",
      "fact_proposals.value",
      "fact_proposals.rationale",
      "fact_proposals.decision_rationale",
      "consolidation_proposals.rationale",
      "consolidation_proposals.decision_rationale",
      "commitments.owner",
    ]) {
      expect(
        before.hits.some((h) => h.startsWith(`${place}:`)),
        place,
      ).toBe(true);
    }
    const [embedded] = await ownerRows<{ n: number }>("SELECT count(*)::int AS n FROM memories WHERE id = ANY ($1::uuid[]) AND embedding IS NOT NULL", [
      [ids.predecessor, ids.rich],
    ]);
    expect(embedded!.n).toBe(2);
  });
});

describe("erasing", () => {
  it("refuses a caller without memory:erase, and a dry run changes nothing", async () => {
    const refused = await rejection(memory.archive.erase({ ids: [ids.rich!], reason: "secret" }, writer(tenantA)));
    expect(refused.reason).toBe("insufficient_scope");
    const dry = await memory.archive.erase({ selector: { subject: T.subject }, reason: "secret", dryRun: true }, eraser(tenantA));
    expect(dry).toMatchObject({ dryRun: true, erased: [ids.rich], factsErased: 3, remaining: 0 });
    expect(dry.erasureId).toBeNull();
    expect((await sweep([T.value])).hits.length).toBeGreaterThan(0);
  });

  it("validates the request: reason, reference, exactly one of ids and selector", async () => {
    const secret = ErasureReason.SECRET;
    const cases: Array<[EraseInit, string]> = [
      [{ ids: [ids.rich!], reason: 42 as ErasureReason }, "reason"],
      [{ ids: [ids.rich!] }, "reason"],
      [{ ids: [ids.rich!], reason: secret, reference: "has spaces in it" }, "reference"],
      [{ reason: secret }, "selector"],
      [{ ids: [ids.rich!], selector: { topic: "x" }, reason: secret }, "selector"],
      [{ selector: {}, reason: secret }, "selector"],
    ];
    for (const [request, field] of cases) {
      const err = await rejection(archiveRpc.erase(request, eraser(tenantA)));
      expect(err.reason, field).toBe("invalid_input");
      expect(err.details.field, JSON.stringify(request)).toBe(field);
    }
  });

  it("a tenant erasing another tenant's memory gets the answer an unknown id gets, and nothing changes", async () => {
    const unknown = randomUUID();
    const foreign = await memory.archive.erase({ ids: [ids.bystander!], reason: "mistake" }, eraser(tenantB));
    const missing = await memory.archive.erase({ ids: [unknown], reason: "mistake" }, eraser(tenantB));
    expect(foreign).toMatchObject({ erased: [], alreadyErased: [], notFound: [ids.bystander], factsErased: 0 });
    expect(missing).toMatchObject({ erased: [], alreadyErased: [], notFound: [unknown], factsErased: 0 });
    expect(foreign.erasureId).toBeNull();
    const read = await memory.memories.getMemories({ ids: [ids.bystander!] }, reader(tenantA));
    expect(read.memories[0]!.content).toBe("The production vault is in another region.");
    expect(read.memories[0]!.erasedAt).toBeUndefined();
  });

  it("erases by subject, by ids and by topic, then the sweep of every text, jsonb and tsvector column finds nothing", async () => {
    const bySubject = await memory.archive.erase({ selector: { subject: T.subject }, reason: "data_subject_request", reference: "DSR-2041" }, eraser(tenantA));
    // The rich memory, with its own fact, the fact accepted from its proposal, and the fact no memory asserted.
    expect(bySubject).toMatchObject({ dryRun: false, erased: [ids.rich], notFound: [], factsErased: 3, remaining: 0 });
    expect(bySubject.erasureId).not.toBeNull();

    const unknown = randomUUID();
    const byIds = await memory.archive.erase({ ids: [ids.predecessor!, ids.commitment!, unknown, ids.rich!], reason: "secret" }, eraser(tenantA));
    expect(byIds.erased.sort()).toEqual([ids.predecessor, ids.commitment].sort());
    expect(byIds).toMatchObject({ alreadyErased: [ids.rich], notFound: [unknown] });

    const byTopic = await memory.archive.erase({ selector: { topic: `Imported ${T.topic}` }, reason: "secret" }, eraser(tenantA));
    expect(byTopic.erased).toEqual([ids.imported]);

    const after = await sweep(NEEDLES);
    expect(after.hits).toEqual([]);
    // The sweep discovered the tables itself, including the ones erasure touches and the audit trail.
    for (const place of [
      "memories.content",
      "memories.search_tsv",
      "facts.value",
      "fact_proposals.rationale",
      "consolidation_proposals.decision_rationale",
      "memory_events.payload",
      "erasures.reference",
      "commitments.owner",
    ]) {
      expect(after.columns, place).toContain(place);
    }
    console.info(`erasure sweep: ${after.tables} tables, ${after.columns.length} text/jsonb/tsvector columns, ${NEEDLES.length} needles, 0 matches`);

    const [vectors] = await ownerRows<{ n: number }>(
      "SELECT count(*)::int AS n FROM memories WHERE id = ANY ($1::uuid[]) AND (embedding IS NOT NULL OR search_tsv IS NOT NULL OR import_key IS NOT NULL)",
      [[ids.predecessor, ids.rich, ids.commitment, ids.imported]],
    );
    expect(vectors!.n).toBe(0);
  });

  it("shows the memories as erased, keeps the supersession chain, and records who erased what and when", async () => {
    const read = await memory.memories.getMemories({ ids: [ids.predecessor!, ids.rich!] }, reader(tenantA));
    for (const m of read.memories) {
      expect(m).toMatchObject({ topic: ERASED_MARKER, content: ERASED_MARKER, tags: [], embedded: "pending" });
      expect(m.erasedAt).toBeDefined();
    }
    // The rich memory was live: erasure archived it. The predecessor stays superseded, pointing at its successor.
    expect(read.memories.find((m) => m.id === ids.rich)!.status).toBe("archived");
    expect(read.memories.find((m) => m.id === ids.predecessor)!.supersededBy).toBe(ids.successor);

    const history = await memory.memories.getHistory({ memoryId: ids.successor! }, reader(tenantA));
    expect(history.lifecycleState).toBe("current");
    expect(history.lineage.map((m) => m.id)).toEqual([ids.predecessor, ids.successor]);
    expect(history.lineage[0]).toMatchObject({ content: ERASED_MARKER });
    expect(history.lineage[1]).toMatchObject({ content: "The vault passphrase was rotated; ask the owner." });
    expect(history.edges).toEqual([expect.objectContaining({ fromId: ids.successor, toId: ids.predecessor, edgeType: "supersedes" })]);
    const erase = history.events.find((e) => e.kind === "erase")!;
    expect(erase).toMatchObject({ memoryId: ids.predecessor, actor: "user_api" });
    expect(erase.payload).toMatchObject({ reason: "secret", by: tenantA.userId, archived: false });

    const audit = await ownerRows<{ actor_kind: string; actor_id: string; reason: string; reference: string | null; memories: number; facts: number }>(
      "SELECT actor_kind, actor_id, reason, reference, memories, facts FROM erasures WHERE tenant_id = $1 ORDER BY created_at, id",
      [tenantA.tenantId],
    );
    expect(audit).toEqual([
      { actor_kind: "user_api", actor_id: tenantA.userId, reason: "data_subject_request", reference: "DSR-2041", memories: 1, facts: 3 },
      { actor_kind: "user_api", actor_id: tenantA.userId, reason: "secret", reference: null, memories: 2, facts: 0 },
      { actor_kind: "user_api", actor_id: tenantA.userId, reason: "secret", reference: null, memories: 1, facts: 0 },
    ]);
  });

  it("is idempotent, and nothing brings the text back: search, embeddings, facts, proposals", async () => {
    const again = await memory.archive.erase({ ids: [ids.rich!], reason: "secret" }, eraser(tenantA));
    expect(again).toMatchObject({ erased: [], alreadyErased: [ids.rich], factsErased: 0 });

    // Search may still rank an erased memory by recency, but only ever as the marker: no leg matches its old text.
    const search = await stack.publicSearchClient();
    for (const query of [T.content, T.topic]) {
      const found = await search.search({ query, status: "archived" }, reader(tenantA));
      expect(found.coverage!.evidence!.anyLexical, query).toBe(false);
      for (const hit of found.hits) expect(`${hit.topic} ${"content" in hit ? hit.content : ""}`).toBe(`${ERASED_MARKER} ${ERASED_MARKER}`);
    }
    const listed = await search.search({ order: "chronological", status: "archived" }, reader(tenantA));
    expect(listed.hits.map((h) => h.id)).toContain(ids.rich);
    for (const hit of listed.hits) for (const needle of NEEDLES) expect(`${hit.topic} ${"content" in hit ? hit.content : ""}`).not.toContain(needle);

    // A late embedding job stores nothing, and erased memories are never listed as pending.
    expect((await memory.maintenance.storeEmbedding({ memoryId: ids.rich!, model: "late-model", vector: [1, 0, 0] }, embedJob(tenantA))).stored).toBe(false);
    const pending = await memory.maintenance.listPendingEmbeddings({ model: "late-model", limit: 100 }, embedJob(tenantA));
    expect(pending.memoryIds).not.toContain(ids.rich);
    expect(pending.memoryIds).toContain(ids.successor);
    // An extraction that read the text before the erasure proposes nothing after it.
    const late = await memory.proposals.createFactProposals(
      { memoryId: ids.rich!, extractor: "llm/test", facts: [{ subject: "late", predicate: "p", value: "v" }] },
      consolidator(tenantA),
    );
    expect(late.createdIds).toEqual([]);
    const facts = await memory.memories.getFacts({ limit: 200 }, reader(tenantA));
    expect(facts.facts.filter((f) => f.value === ERASED_MARKER)).toEqual([]);
    const proposals = await memory.proposals.listProposals({ status: "rejected", limit: 100 }, reader(tenantA));
    expect((proposals.factProposals ?? []).every((p) => p.value === ERASED_MARKER)).toBe(true);
  });

  it("exports erased memories as erased, and an import keeps them so", async () => {
    const { lines } = await exportFile(archiveRpc, reader(tenantA));
    const archive = lines.join("\n");
    for (const needle of NEEDLES) expect(archive).not.toContain(needle);
    const erasedLines = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r.kind === "memory" && r.erasedAt !== undefined);
    expect(erasedLines.map((r) => r.key).sort()).toEqual([ids.predecessor, ids.rich, ids.commitment, ids.imported].sort());
    expect(erasedLines.every((r) => r.content === ERASED_MARKER && r.topic === ERASED_MARKER)).toBe(true);

    const imported = await importFile(archiveRpc, { format: "3ngram", ndjson: archive }, writer(tenantC));
    expect(imported.failed).toBe(0);
    const copy = imported.results.find((r) => r.line === lines.findIndex((l) => l.includes(`"key":"${ids.rich}"`)) + 1)!;
    const read = await memory.memories.getMemories({ ids: [copy.id!] }, reader(tenantC));
    expect(read.memories[0]).toMatchObject({ content: ERASED_MARKER, topic: ERASED_MARKER });
    expect(read.memories[0]!.erasedAt).toBeDefined();
    const [job] = await ownerRows<{ n: number }>("SELECT count(*)::int AS n FROM memories WHERE id = $1 AND search_tsv IS NULL AND erased_at IS NOT NULL", [
      copy.id,
    ]);
    expect(job!.n).toBe(1);
    expect((await importFile(archiveRpc, { format: "3ngram", ndjson: archive }, writer(tenantC))).created).toBe(0);

    // A hand-written erased line that still carries text is refused, naming the field.
    const forged = await importFile(
      archiveRpc,
      {
        format: "3ngram",
        ndjson: JSON.stringify({
          kind: "memory",
          key: "forged",
          memoryType: "note",
          topic: ERASED_MARKER,
          content: "still here",
          erasedAt: "2026-01-01T00:00:00.000Z",
        }),
      },
      writer(tenantC),
    );
    expect(forged.results[0]).toMatchObject({ outcome: "error", reason: "invalid_input" });
    expect(forged.results[0]!.message).toMatch(/^content: /);
  });
});

describe("the grants behind it", () => {
  it("the runtime role still cannot rewrite content, the search role cannot erase, the eraser cannot log in", async () => {
    const client = await stack.ownerPool.connect();
    try {
      const attempt = async (role: string, sql: string) => {
        await client.query("BEGIN");
        try {
          await client.query(`SET LOCAL ROLE ${role}`);
          await client.query("SELECT set_config('app.tenant_id', $1, true)", [tenantA.tenantId]);
          await client.query(sql, [tenantA.tenantId, ids.bystander]);
          return "allowed";
        } catch (err) {
          return (err as Error).message;
        } finally {
          await client.query("ROLLBACK");
        }
      };
      expect(await attempt("threengram_app", "UPDATE memories SET content = 'x' WHERE tenant_id = $1 AND id = $2")).toMatch(/permission denied/);
      expect(await attempt("threengram_app", "UPDATE facts SET value = 'x' WHERE tenant_id = $1 AND memory_id = $2")).toMatch(/permission denied/);
      expect(
        await attempt("threengram_search", "SELECT erase_memories($1, ARRAY[$2]::uuid[], NULL, gen_random_uuid(), 'system', NULL, 'other', NULL)"),
      ).toMatch(/permission denied/);
      // Even the runtime role cannot point the function at a tenant other than the one its transaction is bound to.
      expect(
        await attempt(
          "threengram_app",
          `SELECT erase_memories('${tenantB.tenantId}', ARRAY[$2]::uuid[], NULL, gen_random_uuid(), 'system', NULL, 'other', NULL) WHERE $1::uuid IS NOT NULL`,
        ),
      ).toMatch(/not the one bound/);
    } finally {
      client.release();
    }
    const [role] = await ownerRows<{ rolcanlogin: boolean; rolbypassrls: boolean; owner: string; definer: boolean }>(
      `SELECT r.rolcanlogin, r.rolbypassrls, pg_get_userbyid(p.proowner) AS owner, p.prosecdef AS definer
         FROM pg_proc p, pg_roles r WHERE p.proname = 'erase_memories' AND r.rolname = 'threengram_eraser'`,
    );
    expect(role).toEqual({ rolcanlogin: false, rolbypassrls: false, owner: "threengram_eraser", definer: true });
    const read = await memory.memories.getMemories({ ids: [ids.bystander!] }, reader(tenantA));
    expect(read.memories[0]!.erasedAt).toBeUndefined();
  });
});

describe("the operator command", () => {
  const run = promisify(execFile);
  const cli = (...args: string[]) =>
    run(process.execPath, [join(REPO_ROOT, "services/memory/dist/cli.js"), ...args], { env: { ...process.env, DATABASE_URL: stack.db.url } });

  it("issues memory:erase only with --erase, and erases a selector's memories as the operator", async () => {
    const plain = JSON.parse((await cli("create-key", tenantB.tenantId, "plain")).stdout) as { scopes: string[] };
    expect(plain.scopes).toEqual([SCOPES.read, SCOPES.write]);
    const withErase = JSON.parse((await cli("create-key", tenantB.tenantId, "eraser", "--erase")).stdout) as { scopes: string[] };
    expect(withErase.scopes).toEqual([SCOPES.read, SCOPES.write, SCOPES.erase]);

    const doomed = [
      await remember(tenantB, { memoryType: "note", content: "Operator erases this one.", scope: "work" }),
      await remember(tenantB, { memoryType: "note", content: "And this one.", scope: "work" }),
    ];
    const kept = await remember(tenantB, { memoryType: "note", content: "Personal, so it stays." });
    const dry = JSON.parse((await cli("erase", tenantB.tenantId, "--scope", "work", "--reason", "data_subject_request", "--dry-run")).stdout) as {
      erased: string[];
    };
    expect(dry.erased.sort()).toEqual([...doomed].sort());
    const out = (await cli("erase", tenantB.tenantId, "--scope", "work", "--reason", "data_subject_request", "--reference", "DSR-7")).stdout.trim().split("\n");
    expect(
      out
        .map((line) => (JSON.parse(line) as { erased: string[] }).erased)
        .flat()
        .sort(),
    ).toEqual([...doomed].sort());

    const read = await memory.memories.getMemories({ ids: [...doomed, kept] }, reader(tenantB));
    expect(
      read.memories
        .filter((m) => m.erasedAt !== undefined)
        .map((m) => m.id)
        .sort(),
    ).toEqual([...doomed].sort());
    const audit = await ownerRows<{ actor_kind: string; actor_id: string | null; reference: string; memories: number }>(
      "SELECT actor_kind, actor_id, reference, memories FROM erasures WHERE tenant_id = $1",
      [tenantB.tenantId],
    );
    expect(audit).toEqual([{ actor_kind: "operator", actor_id: null, reference: "DSR-7", memories: 2 }]);
    // Bad input is refused by name, and exits non-zero.
    await expect(cli("erase", tenantB.tenantId, "--scope", "work", "--reason", "because")).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/reason/),
    });
  });
});
