/**
 * Erasure (docs/erasure.md, ADR-0021): one memory, a list of them, or every memory a selector
 * matches, through the database function that alone may rewrite content. Choosing the memories
 * and erasing them happen in one transaction, so what a selector matched is what was erased.
 * A selector erases at most MAX_ERASE_BATCH memories per call and reports how many remain.
 */
import { uuidv7 } from "uuidv7";
import { withTenant, type Queryable } from "@3ngram/db";
import { MAX_ERASE_BATCH, type EraseInput, type ErasureSelector } from "@3ngram/schema";
import { callEraseMemories, countFactsToErase, selectErasureStates, selectErasureTargets, type ErasureFilter } from "../db/erasure.js";
import { resolveReadScopes } from "../db/scopes.js";
import type { Actor, MemoryDeps } from "./deps.js";

export interface EraseResult {
  erasureId: string | null;
  dryRun: boolean;
  erased: string[];
  alreadyErased: string[];
  notFound: string[];
  factsErased: number;
  remaining: number;
}

/** What erasure needs: the operator command builds this much without a running service. */
export type ErasureDeps = Pick<MemoryDeps, "pool" | "runtimeRole" | "log">;

export async function erase(deps: ErasureDeps, actor: Actor, input: EraseInput): Promise<EraseResult> {
  const tenantId = actor.tenantId;
  const result = await withTenant(deps.pool, { role: deps.runtimeRole, tenantId }, async (db) => {
    const targets = input.ids !== undefined ? idTargets(input.ids) : await selectorTargets(db, tenantId, input.selector!);
    if (input.dryRun) return dryRun(db, tenantId, targets);
    const call = await callEraseMemories(db, {
      tenantId,
      erasureId: uuidv7(),
      memoryIds: targets.ids,
      subject: targets.subject,
      actorKind: actor.kind,
      actorId: actor.userId ?? null,
      reason: input.reason,
      reference: input.reference ?? null,
    });
    return {
      erasureId: call.erasureId,
      dryRun: false,
      erased: call.erased,
      alreadyErased: call.alreadyErased,
      notFound: call.notFound,
      factsErased: call.facts,
      remaining: Math.max(0, targets.total - call.erased.length),
    };
  });
  deps.log.info(
    {
      erasure_id: result.erasureId,
      erased: result.erased.length,
      facts: result.factsErased,
      remaining: result.remaining,
      dry_run: result.dryRun,
      reason: input.reason,
    },
    "erasure",
  );
  return result;
}

interface Targets {
  ids: string[];
  /** With a subject selector, that subject's facts go too, even those no memory asserted. */
  subject: string | null;
  /** Selector matches in all (for `remaining`); 0 for an id list. */
  total: number;
}

function idTargets(ids: readonly string[]): Targets {
  return { ids: [...new Set(ids.map((id) => id.toLowerCase()))], subject: null, total: 0 };
}

async function selectorTargets(db: Queryable, tenantId: string, selector: ErasureSelector): Promise<Targets> {
  const filter: ErasureFilter = {
    scopes: selector.scope !== undefined ? await resolveReadScopes(db, tenantId, selector.scope) : null,
    project: selector.project ?? null,
    topic: selector.topic ?? null,
    subject: selector.subject ?? null,
  };
  const { ids, total } = await selectErasureTargets(db, tenantId, filter, MAX_ERASE_BATCH);
  return { ids, subject: filter.subject, total };
}

/** What the same request would erase, changing nothing. */
async function dryRun(db: Queryable, tenantId: string, targets: Targets): Promise<EraseResult> {
  const states = await selectErasureStates(db, tenantId, targets.ids);
  const known = new Set([...states.live, ...states.erased]);
  return {
    erasureId: null,
    dryRun: true,
    erased: states.live,
    alreadyErased: states.erased,
    notFound: targets.ids.filter((id) => !known.has(id)).sort(),
    factsErased: await countFactsToErase(db, tenantId, states.live, targets.subject),
    remaining: Math.max(0, targets.total - states.live.length),
  };
}
