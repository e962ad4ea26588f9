/**
 * Bulk import of an NDJSON archive (our own export format, or the reference MCP memory server's
 * knowledge graph). Every record is validated on its own and stored in its own transaction: a bad
 * line is reported with its line number, reason and field, and the rest carry on. Records are
 * idempotent by their key, so running the same import twice stores nothing new the second time.
 *
 * Imported memories keep their historical valid and recorded times, status, scope and commitment
 * state. They are stored without an embedding; each record's transaction also records its
 * embedding and fact-extraction jobs in the outbox. Full-text search finds them meanwhile.
 *
 * This module stores; import-reader.ts reads and validates the stream, import-errors.ts says how
 * a line's failure is reported.
 */
import { uuidv7 } from "uuidv7";
import { AppError } from "@3ngram/errors";
import { withTenant, type PoolClient } from "@3ngram/db";
import {
  DEFAULT_SCOPE,
  MAX_SCOPE_ALIASES,
  MAX_SCOPE_PROJECTS,
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
  movePolicyDefault,
  resolveWriteScope,
  selectRetrievalPolicy,
  selectScopeByName,
  updateScope,
  upsertRetrievalPolicy,
  type ScopeRow,
} from "../db/scopes.js";
import type { Actor, MemoryDeps } from "./deps.js";
import { errorResult, lineError } from "./import-errors.js";
import { readArchive } from "./import-reader.js";
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

interface Stored {
  outcome: "created" | "skipped";
  id?: string;
  /** A new memory (its jobs are in the outbox). */
  memory?: boolean;
}

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
  // Embedded later like any pending memory. Read for facts like a remembered one, unless it comes
  // from a 3ngram archive: that carries the facts its source kept, and extracting again would
  // propose what the source's reviewers already accepted (racing the fact lines further down the
  // file) or rejected.
  await recordMemoryJobs(db, tenantId, id, { embedding: true, facts: format !== "3ngram" });
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
 *
 * One exception: a scope the archive has under a newer name carries its old name as an alias (a
 * rename leaves it so). When a scope of this tenant has that old name and nothing else (no alias,
 * no project), as the starter scopes every tenant begins with do, it is renamed as the archive's
 * was: the archive's name, the old one kept as an alias, so its memories and filters still resolve.
 */
async function storeScope(db: PoolClient, actor: Actor, r: ArchiveScope): Promise<Stored> {
  const tenantId = actor.tenantId;
  await lockScopeRegistry(db, tenantId);
  const named = await selectScopeByName(db, tenantId, r.name);
  const renamed = named ? null : await bareScopeUnderAnOldName(db, tenantId, r);
  const existing = named ?? renamed;
  const aliases = unique(r.aliases.filter((a) => a !== r.name && !(existing?.aliases ?? []).includes(a)));
  const projects = unique(r.projects.filter((p) => !(existing?.projects ?? []).includes(p)));
  if (existing && aliases.length === 0 && projects.length === 0) return { outcome: "skipped", id: existing.id };

  const clash = await findNameClash(db, tenantId, named ? aliases : [r.name, ...aliases], existing?.id ?? null);
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
  if (existing || mergedProjects.length > 0) {
    await updateScope(db, tenantId, id, { ...(renamed ? { name: r.name } : {}), aliases: mergedAliases, projects: mergedProjects });
  }
  if (renamed) await movePolicyDefault(db, tenantId, renamed.name, r.name);
  return { outcome: "created", id };
}

/** The one scope named by an alias of the archive's scope, when it has no alias or project of its own. */
async function bareScopeUnderAnOldName(db: PoolClient, tenantId: string, r: ArchiveScope): Promise<ScopeRow | null> {
  const found = new Map<string, ScopeRow>();
  for (const alias of unique(r.aliases.filter((a) => a !== r.name))) {
    const scope = await selectScopeByName(db, tenantId, alias);
    if (scope) found.set(scope.id, scope);
  }
  const [only, ...more] = found.values();
  return only && more.length === 0 && only.aliases.length === 0 && only.projects.length === 0 ? only : null;
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
