/**
 * Full-tenant export as a stream of records, read a page at a time. The archive is NDJSON in a fixed order: the header, the
 * scope registry (by name), the retrieval policy, memories (in recorded order), edges, then facts
 * (both in recorded order), so every edge and fact refers to memories earlier in the file and two
 * exports of the same data are identical apart from the header's exportedAt.
 *
 * The cursor is opaque to callers: base64url JSON of the section, the last row written, and the
 * export's start instant (rows recorded after it are left out, so a long export does not chase
 * writes made while it runs).
 */
import { z } from "zod";
import { AppError } from "@3ngram/errors";
import { withTenant, type Queryable } from "@3ngram/db";
import {
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  MAX_EXPORT_PAGE_LINES,
  type ArchiveHeader,
  type ArchivePolicy,
  type ArchiveScope,
  type ExportedEdge,
  type ExportedFact,
  type ExportedMemory,
} from "@3ngram/schema";
import {
  exactNow,
  rowExists,
  selectEdgesAfter,
  selectFactsAfter,
  selectMemoriesForExport,
  selectMemorySizesAfter,
  selectPolicyForExport,
  selectScopesAfter,
  type ExportMemoryRow,
} from "../db/archive.js";
import type { Actor, MemoryDeps } from "./deps.js";
import { factFields, iso, isoOrNull } from "./records.js";

/**
 * A page stops growing past this many bytes of NDJSON (a single line may still be up to ~1.6 MB,
 * content escaped): it bounds what one read-only transaction holds in memory at a time.
 */
const EXPORT_PAGE_BYTES = 2 * 1024 * 1024;

const SECTIONS = ["scopes", "policy", "memories", "edges", "facts"] as const;
type Section = (typeof SECTIONS)[number];

const cursorSchema = z.strictObject({
  v: z.literal(1),
  s: z.enum(SECTIONS),
  a: z.string().min(1).max(256).nullable(),
  u: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/),
});
type Cursor = z.infer<typeof cursorSchema>;

/** One archive record; the JSON of each is a line of the NDJSON file. */
type ArchiveLine = ArchiveHeader | ArchiveScope | ArchivePolicy | ExportedMemory | ExportedEdge | ExportedFact;

interface ExportPage {
  records: ArchiveLine[];
  /** Empty on the last page. */
  nextCursor: string;
}

/**
 * The whole archive (or the rest of it after `cursor`), one record at a time with the cursor that
 * resumes after it on the last record of each page. A page is read only when the one before it has
 * been taken, so a slow reader holds no more than a page, and an abort stops between two pages.
 */
export async function* exportRecords(
  deps: MemoryDeps,
  actor: Actor,
  input: { cursor?: string | undefined },
  signal?: AbortSignal,
): AsyncGenerator<{ record: ArchiveLine; cursor?: string }> {
  let cursor = input.cursor;
  for (;;) {
    signal?.throwIfAborted();
    const page = await exportPage(deps, actor, { cursor });
    const last = page.records.length - 1;
    for (const [i, record] of page.records.entries()) {
      yield i === last && page.nextCursor !== "" ? { record, cursor: page.nextCursor } : { record };
    }
    if (page.nextCursor === "") return;
    cursor = page.nextCursor;
  }
}

/** Collects one page's records within the line and byte bounds. */
class PageWriter {
  readonly records: ArchiveLine[] = [];
  private bytes = 0;

  get room(): number {
    return MAX_EXPORT_PAGE_LINES - this.records.length;
  }

  /** Bytes still free under the budget (the first line of a page always fits). */
  get freeBytes(): number {
    return this.records.length === 0 ? Number.POSITIVE_INFINITY : EXPORT_PAGE_BYTES - this.bytes;
  }

  /** Adds a record unless the page is full; false means "start the next page with it". */
  write(record: ArchiveLine): boolean {
    if (this.room <= 0) return false;
    const size = Buffer.byteLength(JSON.stringify(record), "utf8") + 1;
    if (size > this.freeBytes) return false;
    this.records.push(record);
    this.bytes += size;
    return true;
  }
}

/** What a section reader did: the last row it wrote (the cursor's `after`), and whether the section is done. */
interface SectionProgress {
  last: string | null;
  done: boolean;
}

type SectionReader = (db: Queryable, tenantId: string, cursor: Cursor, page: PageWriter) => Promise<SectionProgress>;

async function exportPage(deps: MemoryDeps, actor: Actor, input: { cursor?: string | undefined }): Promise<ExportPage> {
  const tenantId = actor.tenantId;
  return withTenant(deps.pool, { role: deps.runtimeRole, tenantId, readOnly: true }, async (db) => {
    const page = new PageWriter();
    let cursor: Cursor;
    if (input.cursor === undefined) {
      cursor = { v: 1, s: "scopes", a: null, u: await exactNow(db) };
      page.write({ kind: "archive", format: ARCHIVE_FORMAT, version: ARCHIVE_VERSION, exportedAt: `${cursor.u.slice(0, 23)}Z` } satisfies ArchiveHeader);
    } else {
      cursor = decodeCursor(input.cursor);
      // A row named by the cursor must be this tenant's: another tenant's cursor is refused like a forged one.
      const table = ROW_TABLES[cursor.s];
      if (cursor.a !== null && table !== undefined && !(await rowExists(db, tenantId, table, cursor.a))) throw badCursor();
    }
    for (;;) {
      if (page.room <= 0) break;
      const progress = await READERS[cursor.s](db, tenantId, cursor, page);
      if (progress.last !== null) cursor = { ...cursor, a: progress.last };
      if (!progress.done) break;
      const next = SECTIONS[SECTIONS.indexOf(cursor.s) + 1];
      if (next === undefined) {
        deps.log.info({ lines: page.records.length, last: true }, "export page");
        return { records: page.records, nextCursor: "" };
      }
      cursor = { ...cursor, s: next, a: null };
    }
    deps.log.info({ lines: page.records.length, last: false }, "export page");
    return { records: page.records, nextCursor: encodeCursor(cursor) };
  });
}

/** Sections whose cursor names a row by id. */
const ROW_TABLES: Partial<Record<Section, "memories" | "memory_edges" | "facts">> = { memories: "memories", edges: "memory_edges", facts: "facts" };

const READERS: Record<Section, SectionReader> = {
  async scopes(db, tenantId, cursor, page) {
    const room = page.room;
    const rows = await selectScopesAfter(db, tenantId, cursor.a, room);
    let last: string | null = null;
    for (const row of rows) {
      if (!page.write({ kind: "scope", name: row.name, aliases: row.aliases, projects: row.projects } satisfies ArchiveScope)) return { last, done: false };
      last = row.name;
    }
    return { last, done: rows.length < room };
  },

  async policy(db, tenantId, _cursor, page) {
    const policy = await selectPolicyForExport(db, tenantId);
    const written = page.write({ kind: "retrieval_policy", mode: policy.mode, scope: policy.scope } satisfies ArchivePolicy);
    return { last: null, done: written };
  },

  async memories(db, tenantId, cursor, page) {
    const room = page.room;
    const sizes = await selectMemorySizesAfter(db, tenantId, cursor.a, cursor.u, room);
    // Fetch only as much content as can fit (estimated; the writer has the final word).
    const chosen: string[] = [];
    let estimate = 0;
    for (const s of sizes) {
      const guess = s.bytes + 1024;
      if (chosen.length > 0 && estimate + guess > page.freeBytes) break;
      chosen.push(s.id);
      estimate += guess;
    }
    const rows = chosen.length > 0 ? await selectMemoriesForExport(db, tenantId, chosen) : [];
    let last: string | null = null;
    for (const row of rows) {
      if (!page.write(memoryLine(row))) return { last, done: false };
      last = row.id;
    }
    return { last, done: sizes.length < room && rows.length === sizes.length };
  },

  async edges(db, tenantId, cursor, page) {
    const room = page.room;
    const rows = await selectEdgesAfter(db, tenantId, cursor.a, cursor.u, room);
    let last: string | null = null;
    for (const row of rows) {
      const line: ExportedEdge = { kind: "edge", from: row.from, to: row.to, edgeType: row.edgeType, recordedAt: iso(row.recordedAt) };
      if (!page.write(line)) return { last, done: false };
      last = row.id;
    }
    return { last, done: rows.length < room };
  },

  async facts(db, tenantId, cursor, page) {
    const room = page.room;
    const rows = await selectFactsAfter(db, tenantId, cursor.a, cursor.u, room);
    let last: string | null = null;
    for (const row of rows) {
      const line: ExportedFact = {
        kind: "fact",
        key: row.key,
        memoryKey: row.memoryKey,
        ...factFields(row),
        closedRecordedAt: isoOrNull(row.closedRecordedAt),
      };
      if (!page.write(line)) return { last, done: false };
      last = row.id;
    }
    return { last, done: rows.length < room };
  },
};

/** One memory row → its archive line, every field present and in a fixed order. */
function memoryLine(row: ExportMemoryRow): ExportedMemory {
  return {
    kind: "memory",
    key: row.key,
    memoryType: row.memoryType,
    topic: row.topic,
    content: row.content,
    scope: row.scope,
    project: row.project,
    tags: row.tags,
    status: row.status,
    validFrom: iso(row.validFrom),
    validTo: isoOrNull(row.validTo),
    recordedAt: iso(row.recordedAt),
    closedRecordedAt: isoOrNull(row.closedRecordedAt),
    commitment:
      row.commitmentStatus === null
        ? null
        : {
            status: row.commitmentStatus,
            owner: row.commitmentOwner,
            dueAt: isoOrNull(row.commitmentDueAt),
            resolvedAt: isoOrNull(row.commitmentResolvedAt),
          },
    ...(row.erasedAt !== null ? { erasedAt: iso(row.erasedAt) } : {}),
  };
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor), "utf8").toString("base64url");
}

function decodeCursor(text: string): Cursor {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw badCursor();
  }
  const parsed = cursorSchema.safeParse(value);
  if (!parsed.success) throw badCursor();
  const uuidSections: readonly Section[] = ["memories", "edges", "facts"];
  if (parsed.data.a !== null && uuidSections.includes(parsed.data.s) && !z.uuid().safeParse(parsed.data.a).success) throw badCursor();
  return parsed.data;
}

function badCursor(): AppError {
  return new AppError("invalid_input", "cursor: not a cursor from a previous export page", { field: "cursor" });
}
