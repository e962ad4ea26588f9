/**
 * CheckTenantMembership over gRPC against the real memory service and PostgreSQL: the gateway's
 * question "is this token's user in this token's tenant?". It answers only about the tenant its
 * credential names, a user of another tenant reads as no user at all, and only internal:auth may ask.
 */
import { SCOPES, type CallOptions } from "@3ngram/rpc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertUser } from "../../src/db/tenants.js";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { rejection, writer } from "../../../../test/support/calls.js";

let stack: CoreServices;
let tenantA: { tenantId: string; userId: string; apiKey: string };
let tenantB: { tenantId: string; userId: string; apiKey: string };

/** What the gateway sends: internal:auth, in the tenant the token claims. */
const gatewayIn = (tenantId: string): CallOptions => ({ identity: { tenantId, scopes: [SCOPES.internalAuth] } });

beforeAll(async () => {
  stack = await startCoreServices({ label: "membership", embedder: null });
  tenantA = await stack.createTenant("membership a");
  tenantB = await stack.createTenant("membership b");
});

afterAll(async () => {
  await stack?.close();
});

describe("CheckTenantMembership", () => {
  it("answers yes for the tenant's own users, and no for another tenant's user or a user who does not exist", async () => {
    const memory = await stack.publicMemoryClient();
    expect(await memory.apiKeys.checkTenantMembership({ userId: tenantA.userId }, gatewayIn(tenantA.tenantId))).toEqual({ member: true });
    expect(await memory.apiKeys.checkTenantMembership({ userId: tenantB.userId }, gatewayIn(tenantB.tenantId))).toEqual({ member: true });
    expect(await memory.apiKeys.checkTenantMembership({ userId: tenantA.userId }, gatewayIn(tenantB.tenantId))).toEqual({ member: false });
    expect(await memory.apiKeys.checkTenantMembership({ userId: tenantB.userId }, gatewayIn(tenantA.tenantId))).toEqual({ member: false });
    expect(await memory.apiKeys.checkTenantMembership({ userId: crypto.randomUUID() }, gatewayIn(tenantA.tenantId))).toEqual({ member: false });
    // A tenant that does not exist has no users.
    expect(await memory.apiKeys.checkTenantMembership({ userId: tenantA.userId }, gatewayIn(crypto.randomUUID()))).toEqual({ member: false });
  });

  it("follows the users table: a second user counts once added and stops counting once removed", async () => {
    const memory = await stack.publicMemoryClient();
    const userId = crypto.randomUUID();
    expect((await memory.apiKeys.checkTenantMembership({ userId }, gatewayIn(tenantA.tenantId))).member).toBe(false);
    await insertUser(stack.ownerPool, { id: userId, tenantId: tenantA.tenantId, displayName: "second" });
    expect((await memory.apiKeys.checkTenantMembership({ userId }, gatewayIn(tenantA.tenantId))).member).toBe(true);
    await stack.ownerPool.query("DELETE FROM users WHERE id = $1", [userId]);
    expect((await memory.apiKeys.checkTenantMembership({ userId }, gatewayIn(tenantA.tenantId))).member).toBe(false);
  });

  it("answers no for a credential whose tenant is not a tenant id, rather than failing", async () => {
    const memory = await stack.publicMemoryClient();
    expect(await memory.apiKeys.checkTenantMembership({ userId: tenantA.userId }, gatewayIn("not-a-tenant"))).toEqual({ member: false });
  });

  it("refuses a malformed user id, a credential without a tenant and a caller without internal:auth", async () => {
    const memory = await stack.publicMemoryClient();
    const malformed = await rejection(memory.apiKeys.checkTenantMembership({ userId: "someone" }, gatewayIn(tenantA.tenantId)));
    expect(malformed.reason).toBe("invalid_input");
    expect(malformed.details.field).toBe("userId");
    const noTenant = await rejection(memory.apiKeys.checkTenantMembership({ userId: tenantA.userId }, { identity: { scopes: [SCOPES.internalAuth] } }));
    expect(noTenant.reason).toBe("unauthenticated");
    // A user's own credential cannot probe who else is in its tenant.
    const asUser = await rejection(memory.apiKeys.checkTenantMembership({ userId: tenantA.userId }, writer(tenantA)));
    expect(asUser.reason).toBe("insufficient_scope");
  });
});
