import type { CallContext } from "@3ngram/rpc";
import { ACTOR_KINDS } from "../db/memories.js";
import type { Actor } from "../domain/deps.js";

/** The kinds a caller's token may claim: every one but operator, which only the command line is. */
const CLAIMABLE_ACTOR_KINDS = new Set<Actor["kind"]>(ACTOR_KINDS.filter((kind) => kind !== "operator"));

/** Who is calling, for the domain: the verified tenant and user, and the surface for audit events. */
export function actorOf(ctx: CallContext): Actor {
  const claimed = ctx.caller.actor as Actor["kind"] | undefined;
  const kind = claimed && CLAIMABLE_ACTOR_KINDS.has(claimed) ? claimed : ctx.caller.issuer === "consolidator" ? "worker" : "system";
  return { tenantId: ctx.tenantId, userId: ctx.userId, kind };
}
