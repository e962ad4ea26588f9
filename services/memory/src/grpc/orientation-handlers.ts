import { OrientationService } from "@3ngram/proto/memory/v1";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { HANDOFF_SECTIONS, memoryContracts, type HandoffSection } from "@3ngram/schema";
import { briefing } from "../domain/briefing.js";
import type { MemoryDeps } from "../domain/deps.js";
import { describeEnvironment } from "../domain/environment.js";
import { handoff } from "../domain/handoff.js";
import { NO_CHANGES, commitmentLine, handoffCommitment, handoffMemory, memoryLine, sectionOf } from "../domain/records.js";
import { actorOf } from "./actor.js";

// Orientation: briefing, handoff and describe_environment. All read-only.

export function orientationHandlers(deps: MemoryDeps): Handlers<typeof OrientationService> {
  return bridgeHandlers(OrientationService, memoryContracts.orientation, {
    async briefing(input, ctx) {
      const { sections, ...out } = await briefing(deps, actorOf(ctx), input);
      return {
        ...out,
        ...(sections.commitments ? { commitments: sectionOf(sections.commitments, commitmentLine) } : {}),
        ...(sections.overdue ? { overdue: sectionOf(sections.overdue, commitmentLine) } : {}),
        ...(sections.blockers ? { blockers: sectionOf(sections.blockers, memoryLine) } : {}),
        ...(sections.staleCandidates ? { staleCandidates: sectionOf(sections.staleCandidates, memoryLine) } : {}),
        ...(sections.recentDecisions ? { recentDecisions: sectionOf(sections.recentDecisions, memoryLine) } : {}),
        ...(sections.preferences ? { preferences: sectionOf(sections.preferences, memoryLine) } : {}),
      };
    },
    async handoff(input, ctx) {
      const out = await handoff(deps, actorOf(ctx), input);
      const perSection = <T>(of: (s: (typeof out)[HandoffSection]) => T) =>
        Object.fromEntries(HANDOFF_SECTIONS.map((name) => [name, of(out[name])])) as Record<HandoffSection, T>;
      return {
        selector: out.selector,
        generatedFor: out.generatedFor,
        generatedAt: out.generatedAt,
        appliedScope: out.appliedScope,
        sectionLimit: out.sectionLimit,
        changesCursor: out.changesCursor,
        changesSince: out.changesSince,
        decisions: out.decisions.lines.map(handoffMemory),
        commitments: out.commitments.lines.map(handoffCommitment),
        preferences: out.preferences.lines.map(handoffMemory),
        blockers: out.blockers.lines.map(handoffMemory),
        counts: perSection((s) => s.count),
        truncated: perSection((s) => s.count > s.lines.length),
        ...(out.decisions.changes !== undefined ? { changes: perSection((s) => s.changes ?? NO_CHANGES) } : {}),
      };
    },
    describeEnvironment: async (_input, ctx) => describeEnvironment(deps, actorOf(ctx)),
  });
}

export const orientationPolicies = {
  briefing: { anyScope: [SCOPES.read], tenant: true },
  handoff: { anyScope: [SCOPES.read], tenant: true },
  describeEnvironment: { anyScope: [SCOPES.read], tenant: true },
} satisfies Policies<typeof OrientationService>;
