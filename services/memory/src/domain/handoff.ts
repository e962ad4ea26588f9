import { withTenant } from "@3ngram/db";
import { excerpt, type EffectiveSelector, type HandoffInput, type HandoffSection } from "@3ngram/schema";
import {
  selectCommitmentSection,
  selectMemorySection,
  selectTransactionNow,
  type CommitmentLineRow,
  type ContentHead,
  type MemoryLineRow,
  type SectionRows,
} from "../db/briefing.js";
import type { Actor, MemoryDeps } from "./deps.js";
import { resolveSelector } from "./selector.js";

/** A line's excerpt: at most 600 characters, `truncated` when the stored content is longer. */
export interface Excerpted {
  content: string;
  contentLength: number;
  truncated: boolean;
}

export interface HandoffSectionResult<T> {
  /** Exact number of matches. */
  count: number;
  lines: Array<Omit<T, keyof ContentHead> & Excerpted>;
}

export interface HandoffResult {
  selector: EffectiveSelector;
  appliedScope: string | undefined;
  generatedFor: string | null;
  generatedAt: Date;
  sectionLimit: number;
  decisions: HandoffSectionResult<MemoryLineRow>;
  commitments: HandoffSectionResult<CommitmentLineRow>;
  preferences: HandoffSectionResult<MemoryLineRow>;
  blockers: HandoffSectionResult<MemoryLineRow>;
}

/**
 * A structured export for another agent or provider: live decisions, open and waiting commitments
 * (in briefing order), preferences and blockers, each line with a bounded excerpt, each section
 * bounded by sectionLimit with its exact total. One REPEATABLE READ snapshot, like briefing.
 */
export async function handoff(deps: MemoryDeps, actor: Actor, input: HandoffInput): Promise<HandoffResult> {
  const limit = input.sectionLimit;
  const result = await withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId, readOnly: true, snapshot: true }, async (db) => {
    const now = await selectTransactionNow(db);
    const { effective, appliedScope, filter } = await resolveSelector(db, actor.tenantId, input.selector);
    const memories = (types: ["decision"] | ["preference"] | ["blocker"]) =>
      selectMemorySection(db, actor.tenantId, filter, { types, order: "newest", recordedBefore: null, limit, withContent: true });
    const decisions = await memories(["decision"]);
    const commitments = await selectCommitmentSection(db, actor.tenantId, filter, { now, overdueOnly: false, limit, withContent: true });
    const preferences = await memories(["preference"]);
    const blockers = await memories(["blocker"]);
    return {
      selector: effective,
      appliedScope,
      generatedFor: input.generatedFor ?? null,
      generatedAt: now,
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
  deps.log.info({ selector: result.selector.kind, limit, ...counts }, "handoff read");
  return result;
}

function withExcerpts<T extends ContentHead>(section: SectionRows<T>): HandoffSectionResult<T> {
  return {
    count: section.count,
    lines: section.rows.map(({ contentHead, contentLength, ...row }) => {
      const head = contentHead ?? "";
      const cut = excerpt(head);
      const length = contentLength ?? head.length;
      // The head is longer than an excerpt, so a cut shows in `cut`; a longer stored text shows in the length.
      return { ...row, content: cut.text, contentLength: length, truncated: cut.truncated || length > head.length };
    }),
  };
}
