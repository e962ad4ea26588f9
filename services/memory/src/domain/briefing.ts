import { withTenant, type Queryable } from "@3ngram/db";
import {
  BRIEFING_SECTIONS,
  STALE_CANDIDATE_TYPES,
  STALE_WINDOW_DAYS,
  briefingSectionLimit,
  type BriefingInput,
  type BriefingMode,
  type BriefingSection,
  type EffectiveSelector,
} from "@3ngram/schema";
import {
  selectCommitmentSection,
  selectMemorySection,
  selectTransactionNow,
  type CommitmentLineRow,
  type MemoryLineRow,
  type SectionRows,
  type SelectorFilter,
} from "../db/briefing.js";
import type { Actor, MemoryDeps } from "./deps.js";
import { resolveSelector } from "./selector.js";

const DAY_MS = 24 * 60 * 60 * 1000;

export interface BriefingSections {
  commitments?: SectionRows<CommitmentLineRow>;
  overdue?: SectionRows<CommitmentLineRow>;
  blockers?: SectionRows<MemoryLineRow>;
  staleCandidates?: SectionRows<MemoryLineRow>;
  recentDecisions?: SectionRows<MemoryLineRow>;
  preferences?: SectionRows<MemoryLineRow>;
}

export interface BriefingResult {
  selector: EffectiveSelector;
  appliedScope: string | undefined;
  mode: BriefingMode;
  sectionLimit: number;
  /** The transaction's clock: overdue and stale are judged against it. */
  generatedAt: Date;
  sections: BriefingSections;
}

/**
 * What needs attention, as topics and metadata only: open commitments, overdue ones, blockers,
 * stale candidates, recent decisions and preferences. Each requested section is one bounded query
 * with its exact total; unrequested sections never run. All of them, the selector's scope
 * resolution and the retrieval default read one REPEATABLE READ snapshot, so a write landing
 * mid-briefing is either in every section or in none.
 */
export async function briefing(deps: MemoryDeps, actor: Actor, input: BriefingInput): Promise<BriefingResult> {
  const limit = briefingSectionLimit(input);
  const wanted = new Set<BriefingSection>(input.sections ?? BRIEFING_SECTIONS);
  const result = await withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId, readOnly: true, snapshot: true }, async (db) => {
    const now = await selectTransactionNow(db);
    const selector = await resolveSelector(db, actor.tenantId, input.selector);
    const sections: BriefingSections = {};
    // In the fixed section order, one statement at a time on the transaction's connection.
    for (const name of BRIEFING_SECTIONS) {
      if (wanted.has(name)) Object.assign(sections, { [name]: await readSection(db, actor.tenantId, selector.filter, name, now, limit) });
    }
    return { selector: selector.effective, appliedScope: selector.appliedScope, mode: input.mode, sectionLimit: limit, generatedAt: now, sections };
  });
  deps.log.info({ selector: result.selector.kind, sections: wanted.size, limit }, "briefing read");
  return result;
}

function readSection(
  db: Queryable,
  tenantId: string,
  filter: SelectorFilter,
  name: BriefingSection,
  now: Date,
  limit: number,
): Promise<SectionRows<CommitmentLineRow> | SectionRows<MemoryLineRow>> {
  const base = { limit, withContent: false };
  switch (name) {
    case "commitments":
      return selectCommitmentSection(db, tenantId, filter, { ...base, now, overdueOnly: false });
    case "overdue":
      return selectCommitmentSection(db, tenantId, filter, { ...base, now, overdueOnly: true });
    case "blockers":
      return selectMemorySection(db, tenantId, filter, { ...base, types: ["blocker"], order: "newest", recordedBefore: null });
    case "staleCandidates":
      return selectMemorySection(db, tenantId, filter, {
        ...base,
        types: STALE_CANDIDATE_TYPES,
        order: "oldest",
        recordedBefore: new Date(now.getTime() - STALE_WINDOW_DAYS * DAY_MS),
      });
    case "recentDecisions":
      return selectMemorySection(db, tenantId, filter, { ...base, types: ["decision"], order: "newest", recordedBefore: null });
    case "preferences":
      return selectMemorySection(db, tenantId, filter, { ...base, types: ["preference"], order: "newest", recordedBefore: null });
  }
}
