import { withTenant } from "@3ngram/db";
import { excerpt, type ChangeCounts, type HandoffInput, type HandoffSection } from "@3ngram/schema";
import type { CommitmentLineRow, ContentHead, MemoryLineRow } from "../db/briefing.js";
import type { ChangeFields } from "../db/changes.js";
import { openOrientationRead, type OrientationRead, type Section } from "./briefing.js";
import type { Actor, MemoryDeps } from "./deps.js";

/** A line's excerpt: at most 600 characters, `truncated` when the stored content is longer. */
export interface Excerpted {
  content: string;
  contentLength: number;
  truncated: boolean;
}

interface HandoffSectionResult<T> {
  /** Exact number of matches (with `since`: of changes). */
  count: number;
  lines: Array<Omit<T, keyof ContentHead> & Partial<ChangeFields> & Excerpted>;
  /** With `since`: the changes by kind. */
  changes?: ChangeCounts;
}

export interface HandoffResult extends OrientationRead {
  generatedFor: string | null;
  sectionLimit: number;
  decisions: HandoffSectionResult<MemoryLineRow>;
  commitments: HandoffSectionResult<CommitmentLineRow>;
  preferences: HandoffSectionResult<MemoryLineRow>;
  blockers: HandoffSectionResult<MemoryLineRow>;
}

/**
 * A structured export for another agent or provider: live decisions, open and waiting commitments
 * (in briefing order), preferences and blockers, each line with a bounded excerpt, each section
 * bounded by sectionLimit with its exact total. One REPEATABLE READ snapshot, like briefing, and
 * like briefing, `since` narrows every section to what changed after that cursor's read.
 */
export async function handoff(deps: MemoryDeps, actor: Actor, input: HandoffInput): Promise<HandoffResult> {
  const limit = input.sectionLimit;
  const result = await withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId, readOnly: true, snapshot: true }, async (db) => {
    const { read, sections } = await openOrientationRead(deps, db, actor.tenantId, input, { limit, withContent: true });
    const decisions = await sections.memories(["decision"], "newest", null);
    const commitments = await sections.commitments(false);
    const preferences = await sections.memories(["preference"], "newest", null);
    const blockers = await sections.memories(["blocker"], "newest", null);
    return {
      ...read,
      generatedFor: input.generatedFor ?? null,
      sectionLimit: limit,
      decisions: withExcerpts(decisions),
      commitments: withExcerpts(commitments),
      preferences: withExcerpts(preferences),
      blockers: withExcerpts(blockers),
    };
  });
  const counts: Record<HandoffSection, number> = {
    decisions: result.decisions.count,
    commitments: result.commitments.count,
    preferences: result.preferences.count,
    blockers: result.blockers.count,
  };
  deps.log.info({ selector: result.selector.kind, limit, since: input.since !== undefined, ...counts }, "handoff read");
  return result;
}

function withExcerpts<T extends ContentHead>(section: Section<T>): HandoffSectionResult<T> {
  return {
    count: section.count,
    ...(section.changes !== undefined ? { changes: section.changes } : {}),
    lines: section.rows.map(({ contentHead, contentLength, ...row }) => {
      const head = contentHead ?? "";
      const cut = excerpt(head);
      const length = contentLength ?? head.length;
      // The head is longer than an excerpt, so a cut shows in `cut`; a longer stored text shows in the length.
      return { ...row, content: cut.text, contentLength: length, truncated: cut.truncated || length > head.length };
    }),
  };
}
