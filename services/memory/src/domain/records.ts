/**
 * The memory service's rows as the public records of @3ngram/schema, written once here and used by
 * every RPC that answers with them (the gRPC bridge turns these into messages: docs/grpc.md).
 */
import { CHANGE_KINDS, cutText, type CommitmentRecord, type FactRecord, type MemoryRecord } from "@3ngram/schema";
import type { CommitmentLineRow, MemoryLineRow } from "../db/briefing.js";
import type { ChangeFields } from "../db/changes.js";
import type { FactRow } from "../db/facts.js";
import type { CommitmentRow, MemoryRow } from "../db/memories.js";
import type { Section } from "./briefing.js";
import type { Excerpted } from "./handoff.js";

/** An instant as every public shape and archive line prints it; a row's Date becomes text here, once. */
export const iso = (d: Date) => d.toISOString();
export const isoOrNull = (d: Date | null) => (d === null ? null : d.toISOString());

/** A memory as reads show it, its content cut to `maxContentChars`. */
export function memoryRecord(row: MemoryRow, maxContentChars: number): MemoryRecord {
  const content = cutText(row.content, maxContentChars);
  return {
    id: row.id,
    memoryType: row.memoryType,
    topic: row.topic,
    content: content.text,
    contentLength: content.contentLength,
    truncated: content.truncated,
    scope: row.scope,
    project: row.project,
    recordedAt: iso(row.recordedAt),
    status: row.status,
    tags: row.tags,
    validFrom: iso(row.validFrom),
    validTo: isoOrNull(row.validTo),
    embedded: row.embedded ? "done" : "pending",
    supersededBy: row.supersededBy,
    commitment: row.commitment ? commitmentRecord(row.commitment) : null,
    ...(row.erasedAt ? { erasedAt: iso(row.erasedAt) } : {}),
  };
}

export function commitmentRecord(row: CommitmentRow): CommitmentRecord {
  return { id: row.id, status: row.status, dueAt: isoOrNull(row.dueAt), owner: row.owner };
}

/** A fact's claim and its validity and recording times, as answers and archive lines both show them. */
export function factFields(row: Pick<FactRow, "subject" | "predicate" | "value" | "confidence" | "validFrom" | "validTo" | "recordedAt">) {
  return {
    subject: row.subject,
    predicate: row.predicate,
    value: row.value,
    confidence: row.confidence,
    validFrom: iso(row.validFrom),
    validTo: isoOrNull(row.validTo),
    recordedAt: iso(row.recordedAt),
  };
}

export function factRecord(row: FactRow): FactRecord {
  return { id: row.id, ...factFields(row), memoryId: row.memoryId };
}

/** What a write answers for a stored memory: its identity (not its content back), its facts and commitment. */
export function writtenRecord(memory: MemoryRow, facts: FactRecord[]) {
  return {
    memory: { id: memory.id, memoryType: memory.memoryType, topic: memory.topic, scope: memory.scope, project: memory.project },
    facts,
    ...(memory.commitment ? { commitment: commitmentRecord(memory.commitment) } : {}),
  };
}

/** A listed memory: identity and state, no content. */
export function memorySummary(row: MemoryRow) {
  const { id, memoryType, topic, scope, project, status, tags, recordedAt, supersededBy, commitment } = memoryRecord(row, 0);
  return { id, memoryType, topic, scope, project, status, tags, recordedAt, supersededBy, commitment };
}

/** Orientation lines (briefing and handoff): the fields the public shapes show; rows carry more. */
export const NO_CHANGES = Object.fromEntries(CHANGE_KINDS.map((k) => [k, 0])) as Record<(typeof CHANGE_KINDS)[number], number>;

type Line<T> = Omit<T, "contentHead" | "contentLength"> & Partial<ChangeFields>;

export function commitmentLine(row: Line<CommitmentLineRow>) {
  const { id, memoryId, topic, status, dueAt, owner, overdue, change, supersededBy } = row;
  return { id, memoryId, topic, status, dueAt, owner, overdue, change, supersededBy: supersededBy ?? undefined };
}

export function memoryLine(row: Line<MemoryLineRow>) {
  const { id, memoryType, topic, scope, project, recordedAt, change, supersededBy } = row;
  return { id, memoryType, topic, scope, project, recordedAt, change, supersededBy: supersededBy ?? undefined };
}

export function sectionOf<T, I>(s: Section<T>, line: (row: Line<T>) => I) {
  return { count: s.count, items: s.rows.map(line), hasMore: s.count > s.rows.length, changes: s.changes };
}

export function handoffMemory(line: Line<MemoryLineRow> & Excerpted) {
  return { ...memoryLine(line), content: line.content, contentLength: line.contentLength, truncated: line.truncated };
}

export function handoffCommitment(line: Line<CommitmentLineRow> & Excerpted) {
  const { content, contentLength, truncated, scope, project } = line;
  return { ...commitmentLine(line), content, contentLength, truncated, scope, project };
}
