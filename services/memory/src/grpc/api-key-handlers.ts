import type { MemoryService } from "@3ngram/proto/memory/v1";
import { AppError } from "@3ngram/errors";
import { PUBLIC_SCOPES, type CallContext, type Handlers, type Policies } from "@3ngram/rpc";
import { apiKeyIdSchema } from "@3ngram/schema";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ApiKeyListing } from "../db/tenants.js";
import type { MemoryDeps } from "../domain/deps.js";
import { createMyApiKey, listMyApiKeys, revokeMyApiKey, type KeyOwner } from "../domain/my-api-keys.js";

type ApiKeyMethods = "listMyApiKeys" | "createMyApiKey" | "revokeMyApiKey";

/** The credential's tenant, user and public scopes: whose keys these are and what they may hold. */
function ownerOf(ctx: CallContext): KeyOwner {
  const userId = ctx.userId;
  if (userId === undefined) throw new AppError("unauthenticated", "credential carries no user");
  return { tenantId: ctx.tenantId, userId, scopes: ctx.caller.scopes.filter((s) => (PUBLIC_SCOPES as readonly string[]).includes(s)) };
}

function toProtoApiKey(key: ApiKeyListing) {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    scopes: key.scopes,
    createdAt: timestampFromDate(key.createdAt),
    ...(key.lastUsedAt ? { lastUsedAt: timestampFromDate(key.lastUsedAt) } : {}),
    ...(key.revokedAt ? { revokedAt: timestampFromDate(key.revokedAt) } : {}),
  };
}

export function apiKeyHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, ApiKeyMethods> {
  return {
    async listMyApiKeys(_request, ctx) {
      return { keys: (await listMyApiKeys(deps, ownerOf(ctx))).map(toProtoApiKey) };
    },
    async createMyApiKey(request, ctx) {
      const issued = await createMyApiKey(deps, ownerOf(ctx), { name: request.name, scopes: request.scopes });
      return { key: toProtoApiKey(issued.key), apiKey: issued.apiKey };
    },
    async revokeMyApiKey(request, ctx) {
      const owner = ownerOf(ctx);
      // A malformed id is answered like an unknown one.
      const id = apiKeyIdSchema.safeParse(request.keyId);
      if (!id.success) throw new AppError("not_found", "no such key");
      return { key: toProtoApiKey(await revokeMyApiKey(deps, owner, id.data.toLowerCase())) };
    },
  };
}

/** Any user credential may manage its own keys; what it may create or revoke is decided by its scopes. */
const ownKeys = { anyScope: PUBLIC_SCOPES, tenant: true } as const;

export const apiKeyPolicies: Pick<Policies<typeof MemoryService>, ApiKeyMethods> = {
  listMyApiKeys: ownKeys,
  createMyApiKey: ownKeys,
  revokeMyApiKey: ownKeys,
};
