/**
 * Self-service API keys over gRPC (ListMyApiKeys, CreateMyApiKey, RevokeMyApiKey) on a real
 * PostgreSQL database through the real memory service: a person sees and revokes only their own
 * keys, a key never gets scopes its creator lacks, and a revoked key stops resolving.
 */
import { SCOPES, type CallOptions } from "@3ngram/rpc";
import { MAX_LIVE_API_KEYS_PER_USER } from "@3ngram/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueApiKey } from "../../src/domain/key-admin.js";
import { insertUser } from "../../src/db/tenants.js";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { reader, rejection, writer } from "../../../../test/support/calls.js";

const internalAuth = { identity: { scopes: [SCOPES.internalAuth] } };

let stack: CoreServices;
let tenantA: { tenantId: string; userId: string; apiKey: string };
let tenantB: { tenantId: string; userId: string; apiKey: string };

beforeAll(async () => {
  stack = await startCoreServices({ label: "mykeys", embedder: null });
  tenantA = await stack.createTenant("my keys a");
  tenantB = await stack.createTenant("my keys b");
});

afterAll(async () => {
  await stack?.close();
});

async function secondUserOf(tenantId: string): Promise<CallOptions & { userId: string }> {
  const userId = crypto.randomUUID();
  await insertUser(stack.ownerPool, { id: userId, tenantId, displayName: "second" });
  return { userId, identity: { tenantId, userId, scopes: [SCOPES.read, SCOPES.write] } };
}

describe("self-service API keys", () => {
  it("creates a named read-only key, shown once, that resolves with only memory:read", async () => {
    const memory = await stack.memoryClient();
    const created = await memory.apiKeys.createMyApiKey({ name: "  laptop reader ", scopes: [SCOPES.read] }, writer(tenantA));
    expect(created.apiKey.startsWith(`3ng_${created.key!.prefix}_`)).toBe(true);
    expect(created.key).toMatchObject({ name: "laptop reader", scopes: [SCOPES.read] });
    expect(created.key!.revokedAt).toBeUndefined();
    const resolved = await memory.apiKeys.resolveApiKey({ apiKey: created.apiKey }, internalAuth);
    expect(resolved).toMatchObject({ tenantId: tenantA.tenantId, userId: tenantA.userId, scopes: [SCOPES.read], keyId: created.key!.id });
    // The listing never carries the key again, nor its hash.
    const listed = await memory.apiKeys.listMyApiKeys({}, writer(tenantA));
    expect(listed.keys.map((k) => k.id)).toContain(created.key!.id);
    const { rows } = await stack.ownerPool.query<{ key_hash: string }>("SELECT key_hash FROM api_keys WHERE id = $1", [created.key!.id]);
    const text = JSON.stringify(listed.keys.map((k) => [k.id, k.name, k.prefix, k.scopes]));
    expect(text).not.toContain(created.apiKey.slice(13));
    expect(text).not.toContain(rows[0]!.key_hash);
  });

  it("lists only the caller's own keys, newest first", async () => {
    const memory = await stack.memoryClient();
    const other = await secondUserOf(tenantA.tenantId);
    const mine = await memory.apiKeys.createMyApiKey({ name: "mine", scopes: [SCOPES.read, SCOPES.write] }, writer(tenantA));
    const theirs = await memory.apiKeys.createMyApiKey({ name: "theirs", scopes: [SCOPES.read] }, other);
    const foreign = await memory.apiKeys.createMyApiKey({ name: "foreign", scopes: [SCOPES.read] }, writer(tenantB));
    const listed = (await memory.apiKeys.listMyApiKeys({}, writer(tenantA))).keys.map((k) => k.id);
    expect(listed[0]).toBe(mine.key!.id);
    expect(listed).not.toContain(theirs.key!.id);
    expect(listed).not.toContain(foreign.key!.id);
    expect((await memory.apiKeys.listMyApiKeys({}, other)).keys.map((k) => k.id)).toEqual([theirs.key!.id]);
  });

  it("refuses a read-only caller a read-write key, and any scope outside the public ones", async () => {
    const memory = await stack.memoryClient();
    const before = (await memory.apiKeys.listMyApiKeys({}, reader(tenantA))).keys.length;
    expect((await rejection(memory.apiKeys.createMyApiKey({ name: "escalate", scopes: [SCOPES.read, SCOPES.write] }, reader(tenantA)))).reason).toBe(
      "insufficient_scope",
    );
    expect((await rejection(memory.apiKeys.createMyApiKey({ name: "internal", scopes: [SCOPES.internalAuth] }, writer(tenantA)))).reason).toBe("invalid_input");
    expect((await rejection(memory.apiKeys.createMyApiKey({ name: "none", scopes: [] }, writer(tenantA)))).reason).toBe("invalid_input");
    const badName = await rejection(memory.apiKeys.createMyApiKey({ name: "   ", scopes: [SCOPES.read] }, writer(tenantA)));
    expect(badName).toMatchObject({ reason: "invalid_input", details: { field: "name" } });
    expect((await memory.apiKeys.listMyApiKeys({}, reader(tenantA))).keys.length).toBe(before);
    // The read-only caller may still make a read-only key.
    expect((await memory.apiKeys.createMyApiKey({ name: "reader's reader", scopes: [SCOPES.read] }, reader(tenantA))).key!.scopes).toEqual([SCOPES.read]);
  });

  it("revokes the caller's own key so it no longer resolves; another user's or tenant's key is not found", async () => {
    const memory = await stack.memoryClient();
    const other = await secondUserOf(tenantA.tenantId);
    const mine = await memory.apiKeys.createMyApiKey({ name: "to revoke", scopes: [SCOPES.read] }, writer(tenantA));
    const theirs = await memory.apiKeys.createMyApiKey({ name: "not yours", scopes: [SCOPES.read] }, other);
    const foreign = await memory.apiKeys.createMyApiKey({ name: "foreign", scopes: [SCOPES.read] }, writer(tenantB));
    for (const id of [theirs.key!.id, foreign.key!.id, "0190c0de-0000-7000-8000-00000000beef", "not-a-key-id"]) {
      expect((await rejection(memory.apiKeys.revokeMyApiKey({ keyId: id }, writer(tenantA)))).reason).toBe("not_found");
    }
    expect((await memory.apiKeys.resolveApiKey({ apiKey: theirs.apiKey }, internalAuth)).keyId).toBe(theirs.key!.id);
    expect((await memory.apiKeys.resolveApiKey({ apiKey: foreign.apiKey }, internalAuth)).keyId).toBe(foreign.key!.id);

    const revoked = await memory.apiKeys.revokeMyApiKey({ keyId: mine.key!.id }, writer(tenantA));
    expect(revoked.key!.revokedAt).toBeDefined();
    expect((await rejection(memory.apiKeys.resolveApiKey({ apiKey: mine.apiKey }, internalAuth))).reason).toBe("unauthenticated");
    // Again: a no-op answering the same revocation time.
    const again = await memory.apiKeys.revokeMyApiKey({ keyId: mine.key!.id }, writer(tenantA));
    expect(again.key!.revokedAt).toEqual(revoked.key!.revokedAt);
  });

  it("does not let a read-only caller revoke a read-write key", async () => {
    const memory = await stack.memoryClient();
    const strong = await memory.apiKeys.createMyApiKey({ name: "read-write", scopes: [SCOPES.read, SCOPES.write] }, writer(tenantA));
    expect((await rejection(memory.apiKeys.revokeMyApiKey({ keyId: strong.key!.id }, reader(tenantA)))).reason).toBe("insufficient_scope");
    expect((await memory.apiKeys.resolveApiKey({ apiKey: strong.apiKey }, internalAuth)).keyId).toBe(strong.key!.id);
  });

  it("caps a person's live keys; revoking one makes room", async () => {
    const memory = await stack.memoryClient();
    const person = await secondUserOf(tenantB.tenantId);
    const ids: string[] = [];
    for (let i = 0; i < MAX_LIVE_API_KEYS_PER_USER; i += 1)
      ids.push((await memory.apiKeys.createMyApiKey({ name: `key ${i}`, scopes: [SCOPES.read] }, person)).key!.id);
    expect((await rejection(memory.apiKeys.createMyApiKey({ name: "one too many", scopes: [SCOPES.read] }, person))).reason).toBe("conflict");
    await memory.apiKeys.revokeMyApiKey({ keyId: ids[0]! }, person);
    expect((await memory.apiKeys.createMyApiKey({ name: "room again", scopes: [SCOPES.read] }, person)).key!.name).toBe("room again");
  });

  it("needs a user in the credential, and works for keys an operator issued", async () => {
    const memory = await stack.memoryClient();
    const noUser = { identity: { tenantId: tenantA.tenantId, scopes: [SCOPES.read, SCOPES.write] } };
    expect((await rejection(memory.apiKeys.listMyApiKeys({}, noUser))).reason).toBe("unauthenticated");
    const issued = await issueApiKey(stack.ownerPool, { tenantId: tenantA.tenantId, name: "operator issued", scopes: [SCOPES.read] });
    expect((await memory.apiKeys.listMyApiKeys({}, writer(tenantA))).keys.map((k) => k.id)).toContain(issued.keyId);
    expect((await memory.apiKeys.revokeMyApiKey({ keyId: issued.keyId }, writer(tenantA))).key!.revokedAt).toBeDefined();
  });
});
