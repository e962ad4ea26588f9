import { withTenant, type Queryable } from "@3ngram/db";
import {
  BRIEFING_SECTIONS,
  STALE_CANDIDATE_TYPES,
  STALE_WINDOW_DAYS,
  briefingSectionLimit,
  type BriefingInput,
  type BriefingMode,
  type BriefingSection,
  type ChangeCounts,
  type EffectiveSelector,
  type MemoryType,
} from "@3ngram/schema";
import {
  selectCommitmentSection,
  selectMemorySection,
  type CommitmentLineRow,
  type MemoryLineRow,
  type SectionRead,
  type SectionRows,
} from "../db/briefing.js";
import { selectChangePoint, selectChangedCommitmentSection, selectChangedMemorySection, type ChangeFields, type ChangePoint } from "../db/changes.js";
import { acceptCursor, changeCursorKey, issueCursor } from "./change-cursor.js";
import type { Actor, MemoryDeps } from "./deps.js";
import { resolveSelector, type ResolvedSelector } from "./selector.js";

const DAY_MS = 24 * 60 * 60 * 1000;

/** A section as read: every match, or with `since` only the changes (then `changes` counts them by kind). */
export type Section<T> = SectionRows<T & Partial<ChangeFields>> & { changes?: ChangeCounts };

interface BriefingSections {
  commitments?: Section<CommitmentLineRow>;
  overdue?: Section<CommitmentLineRow>;
  blockers?: Section<MemoryLineRow>;
  staleCandidates?: Section<MemoryLineRow>;
  recentDecisions?: Section<MemoryLineRow>;
  preferences?: Section<MemoryLineRow>;
}

/** What briefing and handoff share about the read itself. */
export interface OrientationRead {
  selector: EffectiveSelector;
  appliedScope: string | undefined;
  /** The transaction's clock: overdue and stale are judged against it. */
  generatedAt: Date;
  /** For the next read's `since`. */
  changesCursor: string;
  /** With `since`: the clock of the read that issued it. */
  changesSince: Date | undefined;
}

export interface BriefingResult extends OrientationRead {
  mode: BriefingMode;
  sectionLimit: number;
  sections: BriefingSections;
}

/** How one orientation read reads its sections: whole, or (with a cursor) only what changed. */
export interface SectionReader {
  memories(types: readonly MemoryType[], order: "newest" | "oldest", staleAfterDays: number | null): Promise<Section<MemoryLineRow>>;
  commitments(overdueOnly: boolean): Promise<Section<CommitmentLineRow>>;
}

/**
 * Opens an orientation read inside the caller's REPEATABLE READ transaction: the clock, the
 * selector as applied (the retrieval default included), the cursor given as `since` checked
 * against this tenant and selector, the cursor this read hands out, and a reader for its sections.
 */
export async function openOrientationRead(
  deps: Pick<MemoryDeps, "pool">,
  db: Queryable,
  tenantId: string,
  input: { selector: BriefingInput["selector"]; since?: string | undefined },
  options: { limit: number; withContent: boolean },
): Promise<{ read: OrientationRead; sections: SectionReader }> {
  const point = await selectChangePoint(db);
  const now = new Date(`${point.at.slice(0, 23)}Z`);
  const selector: ResolvedSelector = await resolveSelector(db, tenantId, input.selector);
  const owner = { tenantId, selector: selector.effective };
  const key = await changeCursorKey(deps.pool, db);
  const since: ChangePoint | null = input.since === undefined ? null : await acceptCursor(db, key, owner, input.since);
  const { filter } = selector;
  const base: SectionRead = { limit: options.limit, withContent: options.withContent };
  const sections: SectionReader = {
    memories: (types, order, staleAfterDays) =>
      since !== null
        ? selectChangedMemorySection(db, tenantId, filter, { ...base, since, types, staleAfterDays })
        : selectMemorySection(db, tenantId, filter, {
            ...base,
            types,
            order,
            validBefore: staleAfterDays === null ? null : new Date(now.getTime() - staleAfterDays * DAY_MS),
          }),
    commitments: (overdueOnly) =>
      since !== null
        ? selectChangedCommitmentSection(db, tenantId, filter, { ...base, since, overdueOnly })
        : selectCommitmentSection(db, tenantId, filter, { ...base, now, overdueOnly }),
  };
  const read: OrientationRead = {
    selector: selector.effective,
    appliedScope: selector.appliedScope,
    generatedAt: now,
    changesCursor: issueCursor(key, owner, point),
    changesSince: since === null ? undefined : new Date(`${since.at.slice(0, 23)}Z`),
  };
  return { read, sections };
}

/**
 * What needs attention, as topics and metadata only: open commitments, overdue ones, blockers,
 * stale candidates, recent decisions and preferences. Each requested section is one bounded query
 * with its exact total; unrequested sections never run. All of them, the selector's scope
 * resolution and the retrieval default read one REPEATABLE READ snapshot, so a write landing
 * mid-briefing is either in every section or in none. With `since`, each section lists only what
 * entered or left it after the read that issued that cursor.
 */
export async function briefing(deps: MemoryDeps, actor: Actor, input: BriefingInput): Promise<BriefingResult> {
  const limit = briefingSectionLimit(input);
  const wanted = new Set<BriefingSection>(input.sections ?? BRIEFING_SECTIONS);
  const result = await withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId, readOnly: true, snapshot: true }, async (db) => {
    const { read, sections: reader } = await openOrientationRead(deps, db, actor.tenantId, input, { limit, withContent: false });
    const sections: BriefingSections = {};
    // In the fixed section order, one statement at a time on the transaction's connection.
    for (const name of BRIEFING_SECTIONS) {
      if (wanted.has(name)) Object.assign(sections, { [name]: await readSection(reader, name) });
    }
    return { ...read, mode: input.mode, sectionLimit: limit, sections };
  });
  deps.log.info({ selector: result.selector.kind, sections: wanted.size, limit, since: input.since !== undefined }, "briefing read");
  return result;
}

function readSection(reader: SectionReader, name: BriefingSection): Promise<Section<CommitmentLineRow> | Section<MemoryLineRow>> {
  switch (name) {
    case "commitments":
      return reader.commitments(false);
    case "overdue":
      return reader.commitments(true);
    case "blockers":
      return reader.memories(["blocker"], "newest", null);
    case "staleCandidates":
      return reader.memories(STALE_CANDIDATE_TYPES, "oldest", STALE_WINDOW_DAYS);
    case "recentDecisions":
      return reader.memories(["decision"], "newest", null);
    case "preferences":
      return reader.memories(["preference"], "newest", null);
  }
}
