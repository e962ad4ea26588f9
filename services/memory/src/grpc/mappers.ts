import type { CallContext } from "@3ngram/rpc";
import type { Actor } from "../domain/deps.js";

const ACTOR_KINDS = new Set<Actor["kind"]>(["user_mcp", "user_api", "worker", "importer", "system"]);

/** Who is calling, for the domain: the verified tenant and user, and the surface for audit events. */
export function actorOf(ctx: CallContext): Actor {
  const claimed = ctx.caller.actor as Actor["kind"] | undefined;
  const kind = claimed && ACTOR_KINDS.has(claimed) ? claimed : ctx.caller.issuer === "consolidator" ? "worker" : "system";
  return { tenantId: ctx.tenantId, userId: ctx.userId, kind };
}
