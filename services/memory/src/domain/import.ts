/**
 * Bulk import of an NDJSON archive (our own export format, or the reference MCP memory server's
 * knowledge graph). Every record is validated on its own and stored in its own transaction: a bad
 * line is reported with its line number, reason and field, and the rest carry on. Records are
 * idempotent by their key, so running the same import twice stores nothing new the second time.
 *
 * Imported memories keep their historical valid and recorded times, status, scope and commitment
 * state. They are stored without an embedding; each record's transaction also records its
 * embedding and fact-extraction jobs in the outbox. Full-text search finds them meanwhile.
 */
import { uuidv7 } from "uuidv7";
import { AppError, isAppError } from "@3ngram/errors";
import { withTenant, type PoolClient } from "@3ngram/db";
import {
  DEFAULT_SCOPE,
  MAX_IMPORT_BODY_BYTES,
  MAX_IMPORT_RECORDS,
  MAX_SCOPE_ALIASES,
  MAX_SCOPE_PROJECTS,
  archiveHeaderSchema,
  archiveRecordSchema,
  parseInput,
  type ArchiveEdge,
  type ArchiveFact,
  type ArchiveMemory,
  type ArchivePolicy,
  type ArchiveRecord,
  type ArchiveScope,
  type ImportFormat,
  type ImportLineResult,
  type ImportPart,
} from "@3ngram/schema";
import {
  closeFact,
  findEdge,
  findFactByKey,
  findMemoryByKey,
  insertImportedCommitment,
  insertImportedEdge,
  insertImportedFact,
  insertImportedMemory,
  lockImportKey,
  lockOpenFact,
  transactionNow,
} from "../db/archive.js";
import { selectSuccessorId } from "../db/edges.js";
import { findLiveByContentHash, insertEvent } from "../db/memories.js";
import {
  findNameClash,
  findProjectClash,
  insertScope,
  lockScopeRegistry,
  resolveWriteScope,
  selectRetrievalPolicy,
  selectScopeByName,
  updateScope,
  upsertRetrievalPolicy,
} from "../db/scopes.js";
import type { Actor, MemoryDeps } from "./deps.js";
import { recordsFromMcpLine } from "./import-mcp-memory.js";
import { recordMemoryJobs } from "./memory-jobs.js";
import { contentHash } from "./remember.js";
import { duplicateMemory } from "./write-memory.js";

export interface ImportResult {
  format: ImportFormat;
  results: ImportLineResult[];
  created: number;
  skipped: number;
  failed: number;
}

/** A record ready to store, or the reason its line was refused before touching the database. */
type Parsed = { line: number; record: Exclude<ArchiveRecord, { kind: "archive" }> } | { line: number; error: AppError };

interface Stored {
  outcome: "created" | "skipped";
  id?: string;
  /** A new memory (its jobs are in the outbox). */
  memory?: boolean;
}

const MAX_MESSAGE_LENGTH = 512;
/** No scope has this id, so a clash check against it considers every scope. */
const NO_SCOPE = "00000000-0000-0000-0000-000000000000";

/**
 * Reads the whole stream first (the options, then the file in pieces), then stores record by
 * record. Nothing is stored before the stream has ended cleanly, so a stream refused as a whole
 * stores nothing, exactly as a refused file did when it came in one message.
 */
export async function importArchive(deps: MemoryDeps, actor: Actor, parts: AsyncIterable<ImportPart>, signal?: AbortSignal): Promise<ImportResult> {
  const { format, parsed } = await readArchive(parts);
  const results: ImportLineResult[] = [];
  let jobsRecorded = 0;
  for (const item of parsed) {
    if (signal?.aborted) throw new AppError("unavailable", `import cancelled after ${results.length} of ${parsed.length} records`);
    if ("error" in item) {
      results.push(errorResult(item.line, item.error));
      continue;
    }
    let stored: Stored;
    try {
      stored = await storeRecord(deps, actor, item.record, item.line, format);
    } catch (err) {
      results.push(errorResult(item.line, lineError(err)));
      continue;
    }
    results.push({ line: item.line, outcome: stored.outcome, ...(stored.id !== undefined ? { id: stored.id } : {}) });
    if (stored.memory) {
      jobsRecorded += 1;
      deps.jobsRecorded();
    }
  }
  const count = (outcome: ImportLineResult["outcome"]) => results.filter((r) => r.outcome === outcome).length;
  const result = { format, results, created: count("created"), skipped: count("skipped"), failed: count("error") };
  deps.log.info(
    { format, records: results.length, created: result.created, skipped: result.skipped, failed: result.failed, memoriesWithJobs: jobsRecorded },
    "import done",
  );
  return result;
}

/**
 * The stream's messages in order: the options first, then pieces of the file, joined and split
 * into lines as they arrive (a piece may end inside a line), then `end`. Request-level problems (a
 * message out of place, too big, too many records, an archive version we cannot read, a stream
 * without its end) refuse the import as a whole and stop reading; a bad line is only that line's
 * error. The end message is what proves the file whole: a client that cancels mid-file can reach
 * this loop as an ordinary end of stream, before its cancellation does.
 */
async function readArchive(parts: AsyncIterable<ImportPart>): Promise<{ format: ImportFormat; parsed: Parsed[] }> {
  let reader: ArchiveReader | undefined;
  let ended = false;
  for await (const part of parts) {
    if (ended) {
      throw new AppError("invalid_input", "end: no message may follow the end message", { field: "end" });
    } else if (reader === undefined) {
      if (part.options === undefined) throw new AppError("invalid_input", "options: the first message must carry the import options", { field: "options" });
      reader = new ArchiveReader(part.options.format);
    } else if (part.options !== undefined) {
      throw new AppError("invalid_input", "options: only the first message may carry options", { field: "options" });
    } else if (part.end === true) {
      ended = true;
    } else if (part.ndjson === undefined) {
      throw new AppError("invalid_input", "ndjson: every message between the first and the end must carry a piece of the file", { field: "ndjson" });
    } else {
      reader.push(part.ndjson);
    }
  }
  if (reader === undefined) throw new AppError("invalid_input", "options: the stream ended before its first message", { field: "options" });
  if (!ended)
    throw new AppError("invalid_input", "end: the stream ended without its end message, so the file may be incomplete; nothing was stored", { field: "end" });
  return { format: reader.format, parsed: reader.end() };
}

/** Splits and validates the file as it arrives, before anything is stored. */
class ArchiveReader {
  private readonly parsed: Parsed[] = [];
  /** The start of a line whose end has not arrived yet. */
  private partial = "";
  private bytes = 0;
  private line = 0;

  constructor(readonly format: ImportFormat) {}

  push(piece: string): void {
    this.bytes += Buffer.byteLength(piece, "utf8");
    if (this.bytes > MAX_IMPORT_BODY_BYTES) {
      throw new AppError("invalid_input", `ndjson: larger than ${MAX_IMPORT_BODY_BYTES} bytes; split the file`, { field: "ndjson" });
    }
    // Only the new piece is searched for line ends, so a long line sent in many pieces costs no more than a short one.
    const lines = piece.split("\n");
    if (lines.length === 1) {
      this.partial += piece;
      return;
    }
    this.readLine(this.partial + lines[0]!);
    for (let i = 1; i < lines.length - 1; i += 1) this.readLine(lines[i]!);
    this.partial = lines[lines.length - 1]!;
  }

  end(): Parsed[] {
    this.readLine(this.partial);
    this.partial = "";
    return this.parsed;
  }

  private readLine(raw: string): void {
    this.line += 1;
    const line = this.line;
    const text = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (text.trim() === "") return;
    const parsed = this.parsed;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      parsed.push({ line, error: new AppError("invalid_input", "line: not valid JSON", { field: "line" }) });
      return;
    }
    if (this.format === "mcp-memory") {
      let records: unknown[];
      try {
        records = recordsFromMcpLine(value);
      } catch (err) {
        parsed.push({ line, error: lineError(err) });
        return;
      }
      for (const record of records) parsed.push(validate(line, record));
    } else if (isHeader(value)) {
      // A header we cannot read means we cannot trust our reading of the lines after it.
      try {
        parseInput(archiveHeaderSchema, value);
      } catch (err) {
        const refused = lineError(err);
        throw new AppError("invalid_input", `line ${line}: ${refused.message}`, refused.details.field ? { field: refused.details.field } : {});
      }
    } else {
      parsed.push(validate(line, value));
    }
    if (parsed.length > MAX_IMPORT_RECORDS) {
      throw new AppError("invalid_input", `ndjson: more than ${MAX_IMPORT_RECORDS} records; split the file`, { field: "ndjson" });
    }
  }
}

function isHeader(value: unknown): boolean {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "archive";
}

function validate(line: number, value: unknown): Parsed {
  try {
    const record = parseInput(archiveRecordSchema, value);
    if (record.kind === "archive") return { line, error: new AppError("invalid_input", "kind: an archive header may not appear here", { field: "kind" }) };
    return { line, record };
  } catch (err) {
    return { line, error: lineError(err) };
  }
}

function storeRecord(deps: MemoryDeps, actor: Actor, record: Exclude<ArchiveRecord, { kind: "archive" }>, line: number, format: ImportFormat): Promise<Stored> {
  const inTenant = <T>(fn: (db: PoolClient) => Promise<T>) => withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId }, fn);
  switch (record.kind) {
    case "scope":
      return inTenant((db) => storeScope(db, actor, record));
    case "retrieval_policy":
      return inTenant((db) => storePolicy(db, actor, record));
    case "memory":
      return inTenant((db) => storeMemory(db, actor, record, line, format));
    case "edge":
      return inTenant((db) => storeEdge(db, actor, record));
    case "fact":
      return inTenant((db) => storeFact(db, actor, record));
  }
}

async function storeMemory(db: PoolClient, actor: Actor, r: ArchiveMemory, line: number, format: ImportFormat): Promise<Stored> {
  const tenantId = actor.tenantId;
  await lockImportKey(db, tenantId, "memories", r.key);
  const existing = await findMemoryByKey(db, tenantId, r.key);
  if (existing) return { outcome: "skipped", id: existing };

  const now = await transactionNow(db);
  notInFuture(now, r.recordedAt, "recordedAt");
  notInFuture(now, r.closedRecordedAt, "closedRecordedAt");
  // A given scope is kept exactly as exported (so the archive reads back unchanged); without one
  // the memory lands where a write without one would.
  const scope = r.scope ?? (await resolveWriteScope(db, tenantId, { scope: undefined, project: r.project ?? undefined }, DEFAULT_SCOPE));
  const id = uuidv7();
  const erased = r.erasedAt !== undefined;
  // An erased memory keeps no hash of what it held (the same rule as the erase function's).
  const hash = erased ? `erased:${id}` : contentHash(r.content);
  const inserted = await insertImportedMemory(db, {
    id,
    tenantId,
    importKey: r.key,
    memoryType: r.memoryType,
    topic: r.topic,
    content: r.content,
    contentHash: hash,
    scope,
    project: r.project,
    tags: r.tags,
    status: r.status,
    validFrom: dateOrNull(r.validFrom),
    validTo: dateOrNull(r.validTo),
    recordedAt: dateOrNull(r.recordedAt),
    closedRecordedAt: dateOrNull(r.closedRecordedAt),
    createdBy: actor.userId ?? null,
    erasedAt: dateOrNull(r.erasedAt),
  });
  if (!inserted) {
    const live = await findLiveByContentHash(db, tenantId, hash);
    throw duplicateMemory(live ?? "unknown");
  }

  // commitment: an object restores that state, null means none, absent means "open" for a commitment.
  const commitment =
    r.commitment === undefined
      ? r.memoryType === "commitment"
        ? { status: "open" as const, owner: null, dueAt: null, resolvedAt: null }
        : null
      : r.commitment;
  if (commitment) {
    const live = r.validTo === null && r.status === "active";
    await insertImportedCommitment(db, {
      id: uuidv7(),
      tenantId,
      memoryId: id,
      status: commitment.status,
      // Erasure took the owner and the surfacing schedule; an erased import gets neither back.
      owner: erased ? null : commitment.owner,
      dueAt: dateOrNull(commitment.dueAt),
      resolvedAt: dateOrNull(commitment.resolvedAt),
      surfaces: !erased && live && (commitment.status === "open" || commitment.status === "waiting"),
    });
  }
  await insertEvent(db, {
    id: uuidv7(),
    tenantId,
    memoryId: id,
    kind: "import",
    actor: "importer",
    payload: erased ? { format, line, via: actor.kind, erased: true } : { format, line, via: actor.kind, contentLength: r.content.length, embedded: "pending" },
  });
  // An erased memory is never embedded (nor scanned for facts): there is nothing left to read.
  if (erased) return { outcome: "created", id };
  // Embedded later like any pending memory, and read for facts like a remembered one.
  await recordMemoryJobs(db, tenantId, id, { embedding: true });
  return { outcome: "created", id, memory: true };
}

async function storeEdge(db: PoolClient, actor: Actor, r: ArchiveEdge): Promise<Stored> {
  const tenantId = actor.tenantId;
  const fromId = await findMemoryByKey(db, tenantId, r.from);
  if (!fromId) throw unknownKey("from");
  const toId = await findMemoryByKey(db, tenantId, r.to);
  if (!toId) throw unknownKey("to");
  if (fromId === toId) throw new AppError("invalid_input", "to: both keys name the same memory", { field: "to" });
  const existing = await findEdge(db, tenantId, fromId, toId, r.edgeType);
  if (existing) return { outcome: "skipped", id: existing };

  notInFuture(await transactionNow(db), r.recordedAt, "recordedAt");
  if (r.edgeType === "supersedes" || r.edgeType === "updates") {
    const successor = await selectSuccessorId(db, tenantId, toId);
    if (successor) {
      throw new AppError("conflict", `to: memory ${toId} already has a successor (${successor})`, { field: "to", ids: { successor } });
    }
  }
  const id = uuidv7();
  await insertImportedEdge(db, { id, tenantId, fromId, toId, edgeType: r.edgeType, createdBy: actor.userId ?? null, recordedAt: dateOrNull(r.recordedAt) });
  return { outcome: "created", id };
}

async function storeFact(db: PoolClient, actor: Actor, r: ArchiveFact): Promise<Stored> {
  const tenantId = actor.tenantId;
  await lockImportKey(db, tenantId, "facts", r.key);
  const existing = await findFactByKey(db, tenantId, r.key);
  if (existing) return { outcome: "skipped", id: existing };

  let memoryId: string | null = null;
  if (r.memoryKey !== null) {
    memoryId = await findMemoryByKey(db, tenantId, r.memoryKey);
    if (!memoryId) throw unknownKey("memoryKey");
  }
  const now = await transactionNow(db);
  notInFuture(now, r.recordedAt, "recordedAt");
  notInFuture(now, r.closedRecordedAt, "closedRecordedAt");
  const validFrom = r.validFrom !== undefined ? new Date(r.validFrom) : now;
  if (r.validTo === null) {
    // An open generation closes the one currently open for the same subject and predicate, as a
    // new assertion would; one that starts earlier than the open one cannot.
    const open = await lockOpenFact(db, tenantId, r.subject, r.predicate);
    if (open) {
      if (open.validFrom > validFrom) {
        throw new AppError("conflict", `validFrom: the open fact ${open.id} for this subject and predicate starts later`, {
          field: "validFrom",
          ids: { existing: open.id },
        });
      }
      await closeFact(db, tenantId, open.id, validFrom);
    }
  }
  const id = uuidv7();
  await insertImportedFact(db, {
    id,
    tenantId,
    importKey: r.key,
    memoryId,
    subject: r.subject,
    predicate: r.predicate,
    value: r.value,
    confidence: r.confidence,
    validFrom,
    validTo: dateOrNull(r.validTo),
    recordedAt: dateOrNull(r.recordedAt),
    closedRecordedAt: dateOrNull(r.closedRecordedAt),
  });
  return { outcome: "created", id };
}

/**
 * Merges a scope into the registry: a new name is created; an existing one keeps its name and
 * gains the aliases and projects it lacked. A name, alias or project that belongs to another scope
 * is a conflict, and the line changes nothing.
 */
async function storeScope(db: PoolClient, actor: Actor, r: ArchiveScope): Promise<Stored> {
  const tenantId = actor.tenantId;
  await lockScopeRegistry(db, tenantId);
  const existing = await selectScopeByName(db, tenantId, r.name);
  const aliases = unique(r.aliases.filter((a) => a !== r.name && !(existing?.aliases ?? []).includes(a)));
  const projects = unique(r.projects.filter((p) => !(existing?.projects ?? []).includes(p)));
  if (existing && aliases.length === 0 && projects.length === 0) return { outcome: "skipped", id: existing.id };

  const clash = await findNameClash(db, tenantId, existing ? aliases : [r.name, ...aliases], existing?.id ?? null);
  if (clash) {
    const field = clash.value === r.name ? "name" : "aliases";
    throw new AppError("conflict", `${field}: ${clash.value} is already the ${clash.as} of scope ${clash.scope}`, { field });
  }
  const projectClash = projects.length > 0 ? await findProjectClash(db, tenantId, projects, existing?.id ?? NO_SCOPE) : null;
  if (projectClash) throw new AppError("conflict", `projects: a project is already mapped to scope ${projectClash.scope}`, { field: "projects" });
  const mergedAliases = [...(existing?.aliases ?? []), ...aliases];
  const mergedProjects = [...(existing?.projects ?? []), ...projects];
  if (mergedAliases.length > MAX_SCOPE_ALIASES)
    throw new AppError("conflict", `aliases: merging would exceed ${MAX_SCOPE_ALIASES} aliases`, { field: "aliases" });
  if (mergedProjects.length > MAX_SCOPE_PROJECTS)
    throw new AppError("conflict", `projects: merging would exceed ${MAX_SCOPE_PROJECTS} projects`, { field: "projects" });

  const id = existing?.id ?? (await insertScope(db, { id: uuidv7(), tenantId, name: r.name, aliases: mergedAliases })).id;
  if (existing || mergedProjects.length > 0) await updateScope(db, tenantId, id, { aliases: mergedAliases, projects: mergedProjects });
  return { outcome: "created", id };
}

/** The archive's retrieval policy applies only while the tenant's is still off (or already the same). */
async function storePolicy(db: PoolClient, actor: Actor, r: ArchivePolicy): Promise<Stored> {
  const tenantId = actor.tenantId;
  await lockScopeRegistry(db, tenantId);
  const current = await selectRetrievalPolicy(db, tenantId);
  if (current.mode === r.mode && current.scope === r.scope) return { outcome: "skipped" };
  if (current.mode !== "off") {
    throw new AppError("conflict", `mode: this tenant's retrieval policy is already ${current.mode}; it was kept`, { field: "mode" });
  }
  if (r.scope !== null && !(await selectScopeByName(db, tenantId, r.scope))) {
    throw new AppError("not_found", "scope: no scope with this name in the registry", { field: "scope" });
  }
  await upsertRetrievalPolicy(db, tenantId, { mode: r.mode, scope: r.scope });
  return { outcome: "created" };
}

function unknownKey(field: "from" | "to" | "memoryKey"): AppError {
  return new AppError("not_found", `${field}: no memory with this key (neither earlier in the file nor already stored)`, { field });
}

function notInFuture(now: Date, value: string | null | undefined, field: string): void {
  if (value !== null && value !== undefined && Date.parse(value) > now.getTime()) {
    throw new AppError("invalid_input", `${field}: must not be in the future`, { field });
  }
}

function dateOrNull(value: string | null | undefined): Date | null {
  return value === null || value === undefined ? null : new Date(value);
}

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

interface PgError {
  code?: unknown;
  constraint?: unknown;
}

/**
 * A failure confined to one line: our own AppErrors, and database refusals caused by the line's
 * data (a check, a unique key raced by a concurrent import, a value out of range). Anything else
 * (the database gone, a bug) aborts the import; what was stored stays, and a re-run skips it.
 */
function lineError(err: unknown): AppError {
  if (isAppError(err)) return err;
  const pg = err as PgError;
  const code = typeof pg?.code === "string" ? pg.code : "";
  const constraint = typeof pg?.constraint === "string" ? ` (${pg.constraint})` : "";
  if (code === "23505") return new AppError("conflict", `the line clashes with a row stored meanwhile${constraint}`);
  if (code.startsWith("23") || code.startsWith("22")) return new AppError("invalid_input", `the database refused the line's values${constraint}`);
  throw err;
}

function errorResult(line: number, err: AppError): ImportLineResult {
  const ids = Object.values(err.details.ids ?? {});
  return {
    line,
    outcome: "error",
    ...(ids.length > 0 ? { id: ids[0]! } : {}),
    reason: err.reason,
    message: err.message.length > MAX_MESSAGE_LENGTH ? `${err.message.slice(0, MAX_MESSAGE_LENGTH - 1)}…` : err.message,
  };
}
