/**
 * The operator CLI's import, run as a process against a real PostgreSQL database: files the real
 * tools wrote (a basic-memory folder, as it is and packed as tar; mem0 get_all answers, as lines
 * and as one saved answer) imported twice store each record once, and the report counts what was
 * created, skipped and failed; progress goes to stderr without content; bad input is refused
 * by name.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { BASIC_MEMORY_FOLDER, BASIC_MEMORY_RECORDS, MEM0_GET_ALL_FILE, mem0FixtureMemories } from "../../../../test/support/import-fixtures.js";
import { REPO_ROOT } from "../../../../test/support/processes.js";

const run = promisify(execFile);
const BASIC_MEMORY_TOTAL = BASIC_MEMORY_RECORDS.memories + BASIC_MEMORY_RECORDS.facts;

interface Report {
  format: string;
  lines: number;
  created: number;
  skipped: number;
  failed: number;
  failures: Array<{ line: number; path?: string; reason: string; message: string }>;
}

let stack: CoreServices;
let scratch: string;

const cli = (...args: string[]) =>
  run(process.execPath, [join(REPO_ROOT, "services/memory/dist/cli.js"), ...args], {
    env: { ...process.env, DATABASE_URL: stack.db.url },
    maxBuffer: 16 * 1024 * 1024,
  });

/** Runs an import; a run that exits 1 because records failed still printed its report. */
async function importWith(...args: string[]): Promise<{ report: Report; stderr: string; code: number }> {
  try {
    const out = await cli("import", ...args);
    return { report: JSON.parse(out.stdout) as Report, stderr: out.stderr, code: 0 };
  } catch (err) {
    const failed = err as { stdout: string; stderr: string; code: number };
    return { report: JSON.parse(failed.stdout) as Report, stderr: failed.stderr, code: failed.code };
  }
}

async function rowCounts(tenantId: string): Promise<{ memories: number; facts: number }> {
  const count = async (sql: string) => (await stack.ownerPool.query<{ n: number }>(sql, [tenantId])).rows[0]!.n;
  return {
    memories: await count("SELECT count(*)::int AS n FROM memories WHERE tenant_id = $1"),
    facts: await count("SELECT count(*)::int AS n FROM facts WHERE tenant_id = $1"),
  };
}

async function keysAndTags(tenantId: string): Promise<Array<[string, string[]]>> {
  const { rows } = await stack.ownerPool.query<{ import_key: string; tags: string[] }>(
    "SELECT import_key, tags FROM memories WHERE tenant_id = $1 ORDER BY import_key",
    [tenantId],
  );
  return rows.map((r) => [r.import_key, r.tags]);
}

beforeAll(async () => {
  stack = await startCoreServices({ label: "cli-import", embedder: null });
  scratch = mkdtempSync(join(tmpdir(), "3ngram-cli-import-"));
});

afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await stack?.close();
});

describe("a basic-memory folder", () => {
  it("imports the folder twice, storing each record once, with progress on stderr and no content in it", async () => {
    const tenant = await stack.createTenant("cli basic-memory");
    const first = await importWith(tenant.tenantId, BASIC_MEMORY_FOLDER, "--project", "atlas");
    expect(first.code).toBe(0);
    expect(first.report).toEqual({ format: "basic-memory", lines: 3, created: BASIC_MEMORY_TOTAL, skipped: 0, failed: 0, failures: [] });
    expect(first.stderr).toContain(`import: done, 3 lines read; ${BASIC_MEMORY_TOTAL} records created, 0 skipped (already stored), 0 failed`);
    expect(first.stderr).not.toMatch(/PostgreSQL|Ledger|noon/);
    const stored = await rowCounts(tenant.tenantId);
    expect(stored).toEqual({ memories: BASIC_MEMORY_RECORDS.memories, facts: BASIC_MEMORY_RECORDS.facts });
    const { rows } = await stack.ownerPool.query<{ project: string | null }>("SELECT DISTINCT project FROM memories WHERE tenant_id = $1", [tenant.tenantId]);
    expect(rows).toEqual([{ project: "atlas" }]);

    const second = await importWith(tenant.tenantId, BASIC_MEMORY_FOLDER, "--project", "atlas");
    expect(second.report).toEqual({ format: "basic-memory", lines: 3, created: 0, skipped: BASIC_MEMORY_TOTAL, failed: 0, failures: [] });
    expect(await rowCounts(tenant.tenantId)).toEqual(stored);
  });

  it("reads a tar.gz of the folder as the folder itself, and a plain tar of it after that stores nothing new", async () => {
    const fromFolder = await stack.createTenant("cli basic-memory folder");
    const fromTar = await stack.createTenant("cli basic-memory tar");
    const packed = join(scratch, "atlas.tar.gz");
    const plain = join(scratch, "atlas.tar");
    // Packed as people do: the folder itself (atlas/…), and its contents (./…).
    await run("tar", ["-czf", packed, "-C", join(BASIC_MEMORY_FOLDER, ".."), "atlas"]);
    await run("tar", ["-cf", plain, "-C", BASIC_MEMORY_FOLDER, "."]);

    expect((await importWith(fromFolder.tenantId, BASIC_MEMORY_FOLDER)).report.created).toBe(BASIC_MEMORY_TOTAL);
    const tarred = await importWith(fromTar.tenantId, packed);
    expect(tarred.report).toEqual({ format: "basic-memory", lines: 3, created: BASIC_MEMORY_TOTAL, skipped: 0, failed: 0, failures: [] });
    // Same keys and the same folder tags as the unpacked folder gave.
    expect(await keysAndTags(fromTar.tenantId)).toEqual(await keysAndTags(fromFolder.tenantId));

    const before = await rowCounts(fromTar.tenantId);
    for (const again of [packed, plain]) {
      expect((await importWith(fromTar.tenantId, again)).report).toMatchObject({ created: 0, skipped: BASIC_MEMORY_TOTAL, failed: 0 });
    }
    expect(await rowCounts(fromTar.tenantId)).toEqual(before);
  });

  it("reports each note it cannot read by path and reason, stores the rest, and exits 1", async () => {
    const tenant = await stack.createTenant("cli basic-memory bad");
    const folder = join(scratch, "bad-notes");
    mkdirSync(join(folder, "inbox"), { recursive: true });
    mkdirSync(join(folder, ".obsidian"), { recursive: true });
    writeFileSync(join(folder, "inbox", "good.md"), "---\ntitle: Good\n---\n- [decision] Keep the inbox small\n");
    writeFileSync(join(folder, "inbox", "broken.md"), "---\ntitle: [unclosed\n---\n- [fact] Never read\n");
    writeFileSync(join(folder, "inbox", "empty.md"), "");
    writeFileSync(join(folder, ".obsidian", "ignored.md"), "- [fact] Editor settings are no notes\n");
    writeFileSync(join(folder, "inbox", "not-a-note.txt"), "ignored too");

    const result = await importWith(tenant.tenantId, folder);
    expect(result.code).toBe(1);
    expect(result.report).toMatchObject({ lines: 3, created: 1, skipped: 0, failed: 2 });
    expect(result.report.failures).toEqual([
      { line: 1, path: "inbox/broken.md", reason: "invalid_input", message: "content: the front matter is not valid YAML" },
      { line: 2, path: "inbox/empty.md", reason: "invalid_input", message: "content: the note holds no text, observation or relation to import" },
    ]);
  });
});

describe("mem0's get_all output", () => {
  const memories = mem0FixtureMemories();

  it("imports the answers twice, as lines and as one saved answer, storing each memory once", async () => {
    const tenant = await stack.createTenant("cli mem0");
    const first = await importWith(tenant.tenantId, MEM0_GET_ALL_FILE, "--format", "mem0");
    expect(first.report).toEqual({ format: "mem0", lines: 3, created: memories.length, skipped: 0, failed: 0, failures: [] });
    const { rows } = await stack.ownerPool.query<{ import_key: string; memory_type: string; content: string; tags: string[]; valid_from: Date }>(
      "SELECT import_key, memory_type, content, tags, valid_from FROM memories WHERE tenant_id = $1",
      [tenant.tenantId],
    );
    const byKey = new Map(rows.map((r) => [r.import_key, r]));
    for (const m of memories) {
      const row = byKey.get(`mem0:${m.id}`);
      expect(row?.content).toBe(m.memory);
      // mem0 writes microseconds; the instant is kept to the millisecond.
      expect(row?.valid_from.getTime()).toBe(Math.floor(Date.parse(m.created_at)));
    }
    const planner = memories.find((m) => m.agent_id === "planner")!;
    expect(byKey.get(`mem0:${planner.id}`)).toMatchObject({ memory_type: "decision", tags: ["mem0-agent:planner", "mem0-run:run-42", "atlas", "databases"] });
    const stored = await rowCounts(tenant.tenantId);

    // The same memories again, now as one get_all answer saved over many lines.
    const saved = join(scratch, "get_all.json");
    writeFileSync(saved, JSON.stringify({ results: memories }, null, 2));
    const second = await importWith(tenant.tenantId, saved, "--format", "mem0");
    expect(second.report).toEqual({ format: "mem0", lines: memories.length, created: 0, skipped: memories.length, failed: 0, failures: [] });
    const third = await importWith(tenant.tenantId, MEM0_GET_ALL_FILE, "--format", "mem0");
    expect(third.report).toMatchObject({ created: 0, skipped: memories.length, failed: 0 });
    expect(await rowCounts(tenant.tenantId)).toEqual(stored);
  });
});

describe("long imports and bad input", () => {
  it("imports in batches, reporting progress after each and numbering lines across them", async () => {
    const tenant = await stack.createTenant("cli batches");
    const file = join(scratch, "graph.jsonl");
    const relations = Array.from({ length: 1_100 }, (_, i) => ({ type: "relation", from: `service-${i}`, to: "postgres", relationType: "depends_on" }));
    writeFileSync(file, [...relations.map((r) => JSON.stringify(r)), "{not json"].join("\n") + "\n");
    const result = await importWith(tenant.tenantId, file, "--format", "mcp-memory");
    expect(result.report).toMatchObject({ format: "mcp-memory", lines: 1_101, created: 1_100, skipped: 0, failed: 1 });
    expect(result.report.failures).toEqual([{ line: 1_101, reason: "invalid_input", message: "line: not valid JSON" }]);
    const progress = result.stderr.trim().split("\n");
    expect(progress.map((line) => /^import: (?:done, )?(\d+) lines read/.exec(line)?.[1])).toEqual(["500", "1000", "1101", "1101"]);
  });

  it("refuses what it cannot import, by name, before storing anything", async () => {
    const tenant = await stack.createTenant("cli refusals");
    const refusals: Array<[string[], RegExp]> = [
      [[tenant.tenantId, MEM0_GET_ALL_FILE, "--format", "mem1"], /^format: /],
      [[tenant.tenantId, MEM0_GET_ALL_FILE, "--format", "mem0", "--project", "atlas"], /--project is only for basic-memory/],
      [["00000000-0000-4000-8000-000000000000", BASIC_MEMORY_FOLDER], /no tenant/],
      [[tenant.tenantId, join(scratch, "missing.ndjson")], /ENOENT/],
      [[tenant.tenantId, BASIC_MEMORY_FOLDER, "--format", "mem0"], /is a folder; only format basic-memory reads a folder/],
      [[tenant.tenantId], /^usage: import/],
    ];
    for (const [args, message] of refusals) {
      await expect(cli("import", ...args)).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(message) });
    }
    const notTar = join(scratch, "notes.tar.gz");
    writeFileSync(notTar, readFileSync(MEM0_GET_ALL_FILE));
    await expect(cli("import", tenant.tenantId, notTar)).rejects.toMatchObject({ code: 1, stderr: expect.stringMatching(/not a tar archive/) });
    expect(await rowCounts(tenant.tenantId)).toEqual({ memories: 0, facts: 0 });
  });
});
