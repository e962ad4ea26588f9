import { ApiKeysService } from "@3ngram/proto/memory/v1";
import { AppError } from "@3ngram/errors";
import { PUBLIC_SCOPES, SCOPES, bridgeHandlers, type CallContext, type Handlers, type Policies } from "@3ngram/rpc";
import { apiKeyIdSchema, memoryContracts } from "@3ngram/schema";
import type { ApiKeyListing } from "../db/tenants.js";
import type { MemoryDeps } from "../domain/deps.js";
import { createMyApiKey, listMyApiKeys, revokeMyApiKey, type KeyOwner } from "../domain/my-api-keys.js";
import { isTenantMember, resolveApiKey } from "../domain/tenants.js";

// ApiKeysService: a user's own keys, and the gateway's resolution of a presented key.

/** The credential's tenant, user and public scopes: whose keys these are and what they may hold. */
function ownerOf(ctx: CallContext): KeyOwner {
  const userId = ctx.userId;
  if (userId === undefined) throw new AppError("unauthenticated", "credential carries no user");
  return { tenantId: ctx.tenantId, userId, scopes: ctx.caller.scopes.filter((s) => (PUBLIC_SCOPES as readonly string[]).includes(s)) };
}

/** The public key record: the owner is the caller, so the user id stays out. */
const record = ({ userId: _userId, ...key }: ApiKeyListing) => key;

export function apiKeyHandlers(deps: MemoryDeps): Handlers<typeof ApiKeysService> {
  return bridgeHandlers(ApiKeysService, memoryContracts.apiKeys, {
    listMyApiKeys: async (_input, ctx) => ({ keys: (await listMyApiKeys(deps, ownerOf(ctx))).map(record) }),
    async createMyApiKey(input, ctx) {
      const issued = await createMyApiKey(deps, ownerOf(ctx), input);
      return { key: record(issued.key), apiKey: issued.apiKey };
    },
    async revokeMyApiKey({ keyId }, ctx) {
      const owner = ownerOf(ctx);
      // A malformed id is answered like an unknown one.
      const id = apiKeyIdSchema.safeParse(keyId);
      if (!id.success) throw new AppError("not_found", "no such key");
      return { key: record(await revokeMyApiKey(deps, owner, id.data.toLowerCase())) };
    },
    resolveApiKey: async ({ apiKey }) => resolveApiKey(deps.pool, deps.runtimeRole, apiKey, deps.log),
    checkTenantMembership: async ({ userId }, ctx) => ({ member: await isTenantMember(deps.pool, deps.runtimeRole, ctx.tenantId, userId) }),
  });
}

/** Any user credential may manage its own keys; what it may create or revoke is decided by its scopes. */
const ownKeys = { anyScope: PUBLIC_SCOPES, tenant: true } as const;

export const apiKeyPolicies = {
  listMyApiKeys: ownKeys,
  createMyApiKey: ownKeys,
  revokeMyApiKey: ownKeys,
  resolveApiKey: { anyScope: [SCOPES.internalAuth], tenant: false },
  // The gateway's credential names the tenant the token claims; the answer is about that tenant only.
  checkTenantMembership: { anyScope: [SCOPES.internalAuth], tenant: true },
} satisfies Policies<typeof ApiKeysService>;
