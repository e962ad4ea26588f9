/**
 * The operator CLI's import: a file, or for basic-memory a folder or a tar of one, into a tenant,
 * through the same domain call the REST import makes. The lines go in batches, each one import
 * call (bounded like a REST body), so an import of any length holds one batch in memory and
 * reports its progress on stderr after every batch: counts only, never content. The report is
 * printed on stdout at the end as JSON: the counts, and every record that failed with its line,
 * note path, reason and message.
 */
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { withOwnerTransaction, type Pool } from "@3ngram/db";
import { createLogger } from "@3ngram/runtime";
import { MAX_IMPORT_BODY_BYTES, importQuerySchema, parseInput, projectSchema, type ImportFormat, type ImportPart } from "@3ngram/schema";
import { runtimeDbRoleEnv } from "./config.js";
import { selectUserIds } from "./db/tenants.js";
import type { MemoryDeps } from "./domain/deps.js";
import { importArchive } from "./domain/import.js";
import { importSource, type SourceLine } from "./import-source.js";

/** Lines per import call: a progress line every this many, and small enough that no batch nears the record bound. */
const BATCH_LINES = 500;
/** Bytes per import call, well inside what one import accepts. */
const BATCH_BYTES = Math.floor(MAX_IMPORT_BODY_BYTES / 4);
const FOLDER_OR_TAR = /\.(tar|tar\.gz|tgz|md)$/i;

const USAGE = "usage: import <tenant-id> <file | folder | tar> [--format 3ngram|mcp-memory|mem0|basic-memory] [--project <project>]";

interface Failure {
  line: number;
  path?: string;
  reason: string;
  message: string;
}

interface Report {
  format: ImportFormat;
  lines: number;
  created: number;
  skipped: number;
  failed: number;
  failures: Failure[];
}

export async function importCommand(
  pool: Pool,
  args: readonly string[],
  flags: { format?: string | undefined; project?: string | undefined },
): Promise<Report> {
  const [tenantId, given] = args;
  if (!tenantId || !given || args.length > 2) throw new Error(USAGE);
  // `npm run admin -w services/memory` runs in the workspace's folder; a relative path means the one npm was started in.
  const path = resolve(process.env.INIT_CWD ?? process.cwd(), given);
  const format = await formatOf(path, flags.format);
  if (flags.project !== undefined && format !== "basic-memory")
    throw new Error("import: --project is only for basic-memory notes; the other formats carry their own");
  const project = flags.project === undefined ? undefined : parseInput(projectSchema, flags.project);
  const users = await withOwnerTransaction(pool, (db) => selectUserIds(db, tenantId), { tenantId });
  if (users.length === 0) throw new Error(`import: no tenant ${tenantId}`);

  const deps: MemoryDeps = {
    pool,
    runtimeRole: runtimeDbRoleEnv.parse(process.env.RUNTIME_DB_ROLE),
    // No embedder here: imported memories are stored pending and their embedding jobs wait in the
    // outbox, which the running memory service's relay moves on its next tick.
    embedder: null,
    jobsRecorded: () => {},
    inlineEmbedBudgetMs: 0,
    log: createLogger({ service: "memory-cli", level: "warn" }),
  };
  const actor = { tenantId, userId: undefined, kind: "operator" as const };
  const report: Report = { format, lines: 0, created: 0, skipped: 0, failed: 0, failures: [] };
  let batch: SourceLine[] = [];
  let bytes = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const first = report.lines + 1;
    const result = await importArchive(deps, actor, parts(format, batch));
    for (const r of result.results) {
      if (r.outcome !== "error") continue;
      const label = batch[r.line - 1]?.label;
      report.failures.push({
        line: first + r.line - 1,
        ...(label !== undefined ? { path: label } : {}),
        reason: r.reason ?? "error",
        message: r.message ?? "",
      });
    }
    report.lines += batch.length;
    report.created += result.created;
    report.skipped += result.skipped;
    report.failed += result.failed;
    batch = [];
    bytes = 0;
    process.stderr.write(`import: ${summary(report)}\n`);
  };
  for await (const line of importSource(path, format, { project })) {
    const size = Buffer.byteLength(line.text, "utf8") + 1;
    if (batch.length === BATCH_LINES || (batch.length > 0 && bytes + size > BATCH_BYTES)) await flush();
    batch.push(line);
    bytes += size;
  }
  await flush();
  process.stderr.write(`import: done, ${summary(report)}\n`);
  return report;
}

/** The format asked for, else basic-memory for a folder, tar or note, else our own archive. */
async function formatOf(path: string, asked: string | undefined): Promise<ImportFormat> {
  if (asked !== undefined) return parseInput(importQuerySchema, { format: asked }).format;
  return (await stat(path)).isDirectory() || FOLDER_OR_TAR.test(path) ? "basic-memory" : "3ngram";
}

/** One batch as the stream an import reads: the options, the lines, the end. */
async function* parts(format: ImportFormat, lines: readonly SourceLine[]): AsyncGenerator<ImportPart> {
  yield { options: { format } };
  yield { ndjson: lines.map((l) => l.text).join("\n") };
  yield { end: true };
}

function summary(report: Report): string {
  return `${report.lines} lines read; ${report.created} records created, ${report.skipped} skipped (already stored), ${report.failed} failed`;
}
