import { SearchService } from "@3ngram/proto/search/v1";
import { SCOPES, bridgeHandlers, type Handlers, type Policies } from "@3ngram/rpc";
import { searchContract } from "@3ngram/schema";
import { search, type SearchDeps } from "../domain/search.js";

export function searchHandlers(deps: SearchDeps): Pick<Handlers<typeof SearchService>, keyof typeof searchPolicies> {
  return bridgeHandlers(SearchService, searchContract, {
    // The domain answers in the public shape; the bridge writes it as the response message.
    search: (input, ctx) => search(deps, ctx.tenantId, input),
  });
}

export const searchPolicies = {
  search: { anyScope: [SCOPES.read], tenant: true },
} satisfies Partial<Policies<typeof SearchService>>;
