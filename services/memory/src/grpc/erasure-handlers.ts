import type { MemoryService } from "@3ngram/proto/memory/v1";
import { SCOPES, type Handlers, type Policies } from "@3ngram/rpc";
import { eraseInputSchema, parseInput } from "@3ngram/schema";
import type { MemoryDeps } from "../domain/deps.js";
import { erase } from "../domain/erasure.js";
import { actorOf } from "./mappers.js";

// Erasure: memory:erase only, which no credential holds unless it was asked for by name.
type ErasureMethods = "erase";

export function erasureHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, ErasureMethods> {
  return {
    async erase(request, ctx) {
      const input = parseInput(eraseInputSchema, {
        // proto3 has no absent list: an empty one means "not given".
        ...(request.ids.length > 0 ? { ids: request.ids } : {}),
        ...(request.selector !== undefined ? { selector: messageFields(request.selector) } : {}),
        reason: request.reason,
        ...(request.reference !== undefined ? { reference: request.reference } : {}),
        dryRun: request.dryRun,
      });
      const out = await erase(deps, actorOf(ctx), input);
      return {
        ...(out.erasureId !== null ? { erasureId: out.erasureId } : {}),
        dryRun: out.dryRun,
        erased: out.erased,
        alreadyErased: out.alreadyErased,
        notFound: out.notFound,
        factsErased: out.factsErased,
        remaining: out.remaining,
      };
    },
  };
}

/** A message's own fields (the selector's are optional strings, as in the zod shape), without protobuf-es bookkeeping. */
function messageFields<M extends { $typeName: string; $unknown?: unknown }>(message: M): Omit<M, "$typeName" | "$unknown"> {
  const { $typeName: _type, $unknown: _unknown, ...fields } = message;
  return fields;
}

export const erasurePolicies: Pick<Policies<typeof MemoryService>, ErasureMethods> = {
  erase: { anyScope: [SCOPES.erase], tenant: true },
};
