/**
 * API key administration (the operator commands behind `npm run admin -w services/memory`):
 * issuing, listing and revoking keys on a real PostgreSQL database, checked through the real
 * memory service's ResolveApiKey, plus one run of the CLI as a process.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { SCOPES } from "@3ngram/rpc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueApiKey, listApiKeys, revokeApiKey } from "../../src/domain/key-admin.js";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { rejection } from "../../../../test/support/calls.js";
import { REPO_ROOT } from "../../../../test/support/processes.js";

const run = promisify(execFile);
const internalAuth = { identity: { scopes: [SCOPES.internalAuth] } };

let stack: CoreServices;
let tenantA: { tenantId: string; userId: string; apiKey: string };
let tenantB: { tenantId: string; userId: string; apiKey: string };

beforeAll(async () => {
  stack = await startCoreServices({ label: "keyadmin", embedder: null });
  tenantA = await stack.createTenant("keys a");
  tenantB = await stack.createTenant("keys b");
});

afterAll(async () => {
  await stack?.close();
});

describe("API key administration", () => {
  it("issues a read-only key for the tenant's user that the memory service resolves with only that scope", async () => {
    const issued = await issueApiKey(stack.ownerPool, { tenantId: tenantA.tenantId, name: "ci reader", scopes: ["memory:read"] });
    expect(issued.userId).toBe(tenantA.userId);
    expect(issued.apiKey.startsWith(`3ng_${issued.prefix}_`)).toBe(true);
    const memory = await stack.memoryClient();
    const resolved = await memory.apiKeys.resolveApiKey({ apiKey: issued.apiKey }, internalAuth);
    expect(resolved).toMatchObject({ tenantId: tenantA.tenantId, userId: tenantA.userId, scopes: ["memory:read"], keyId: issued.keyId });
  });

  it("records when a key was last used, at most once a minute", async () => {
    const issued = await issueApiKey(stack.ownerPool, { tenantId: tenantA.tenantId, name: "used", scopes: ["memory:read"] });
    const lastUsed = async () => (await listApiKeys(stack.ownerPool, tenantA.tenantId)).find((k) => k.id === issued.keyId)?.lastUsedAt;
    expect(await lastUsed()).toBeNull();
    const memory = await stack.memoryClient();
    await memory.apiKeys.resolveApiKey({ apiKey: issued.apiKey }, internalAuth);
    const first = await lastUsed();
    expect(first).toBeInstanceOf(Date);
    await memory.apiKeys.resolveApiKey({ apiKey: issued.apiKey }, internalAuth);
    expect((await lastUsed())?.getTime()).toBe(first!.getTime());
    // An hour later (as far as the row knows), the next lookup records the use again.
    await stack.ownerPool.query("UPDATE api_keys SET last_used_at = last_used_at - interval '1 hour' WHERE id = $1", [issued.keyId]);
    await memory.apiKeys.resolveApiKey({ apiKey: issued.apiKey }, internalAuth);
    expect((await lastUsed())!.getTime()).toBeGreaterThan(first!.getTime() - 3_600_000);
  });

  it("lists a tenant's keys with prefix, name and scopes, never the key or its hash, and only that tenant's", async () => {
    const issued = await issueApiKey(stack.ownerPool, { tenantId: tenantA.tenantId, name: "listed", scopes: ["memory:read", "memory:write"] });
    const keys = await listApiKeys(stack.ownerPool, tenantA.tenantId);
    const row = keys.find((k) => k.id === issued.keyId);
    expect(row).toMatchObject({ name: "listed", prefix: issued.prefix, scopes: ["memory:read", "memory:write"], revokedAt: null, userId: tenantA.userId });
    // The secret part follows "3ng_<prefix>_" (a prefix may itself contain "_").
    expect(JSON.stringify(keys)).not.toContain(issued.apiKey.slice(`3ng_${issued.prefix}_`.length));
    expect(Object.keys(row!)).not.toContain("keyHash");
    const others = await listApiKeys(stack.ownerPool, tenantB.tenantId);
    expect(others.map((k) => k.id)).not.toContain(issued.keyId);
  });

  it("revokes by prefix or id; the memory service then refuses the key, and a second revoke finds nothing", async () => {
    const memory = await stack.memoryClient();
    const byPrefix = await issueApiKey(stack.ownerPool, { tenantId: tenantA.tenantId, name: "revoke me", scopes: ["memory:write"] });
    expect(await revokeApiKey(stack.ownerPool, { tenantId: tenantA.tenantId, key: byPrefix.prefix })).toBe(byPrefix.keyId);
    expect((await rejection(memory.apiKeys.resolveApiKey({ apiKey: byPrefix.apiKey }, internalAuth))).reason).toBe("unauthenticated");
    expect((await listApiKeys(stack.ownerPool, tenantA.tenantId)).find((k) => k.id === byPrefix.keyId)?.revokedAt).toBeInstanceOf(Date);
    expect((await rejection(revokeApiKey(stack.ownerPool, { tenantId: tenantA.tenantId, key: byPrefix.prefix }))).reason).toBe("not_found");

    const byId = await issueApiKey(stack.ownerPool, { tenantId: tenantA.tenantId, name: "by id", scopes: ["memory:read"] });
    await revokeApiKey(stack.ownerPool, { tenantId: tenantA.tenantId, key: byId.keyId });
    expect((await rejection(memory.apiKeys.resolveApiKey({ apiKey: byId.apiKey }, internalAuth))).reason).toBe("unauthenticated");
    // The tenant's other keys keep working.
    expect((await memory.apiKeys.resolveApiKey({ apiKey: tenantA.apiKey }, internalAuth)).tenantId).toBe(tenantA.tenantId);
  });

  it("cannot reach another tenant's key: its prefix or id answers not_found there and the key stays live", async () => {
    const memory = await stack.memoryClient();
    const foreign = await issueApiKey(stack.ownerPool, { tenantId: tenantB.tenantId, name: "b's", scopes: ["memory:read"] });
    expect((await rejection(revokeApiKey(stack.ownerPool, { tenantId: tenantA.tenantId, key: foreign.prefix }))).reason).toBe("not_found");
    expect((await rejection(revokeApiKey(stack.ownerPool, { tenantId: tenantA.tenantId, key: foreign.keyId }))).reason).toBe("not_found");
    expect((await memory.apiKeys.resolveApiKey({ apiKey: foreign.apiKey }, internalAuth)).tenantId).toBe(tenantB.tenantId);
    expect(
      (await rejection(issueApiKey(stack.ownerPool, { tenantId: tenantA.tenantId, userId: tenantB.userId, name: "x", scopes: ["memory:read"] }))).reason,
    ).toBe("not_found");
  });

  it("refuses bad input naming the field", async () => {
    const refuse = async (p: Promise<unknown>) => {
      const err = await rejection(p);
      return `${err.reason}:${err.details.field}`;
    };
    expect(await refuse(issueApiKey(stack.ownerPool, { tenantId: tenantA.tenantId, name: "x", scopes: ["internal:auth"] }))).toBe("invalid_input:scopes");
    expect(await refuse(issueApiKey(stack.ownerPool, { tenantId: tenantA.tenantId, name: "x", scopes: [] }))).toBe("invalid_input:scopes");
    expect(await refuse(issueApiKey(stack.ownerPool, { tenantId: tenantA.tenantId, name: "  ", scopes: ["memory:read"] }))).toBe("invalid_input:name");
    expect(await refuse(issueApiKey(stack.ownerPool, { tenantId: "not-a-tenant", name: "x", scopes: ["memory:read"] }))).toBe("invalid_input:tenant");
    expect(await refuse(revokeApiKey(stack.ownerPool, { tenantId: tenantA.tenantId, key: "x'; --" }))).toBe("invalid_input:key");
  });

  it("the CLI issues, lists and revokes keys", async () => {
    const cli = (...args: string[]) =>
      run(process.execPath, [join(REPO_ROOT, "services/memory/dist/cli.js"), ...args], { env: { ...process.env, DATABASE_URL: stack.db.url } });
    const created = JSON.parse((await cli("create-key", tenantA.tenantId, "from the cli", "--read-only")).stdout) as {
      keyId: string;
      prefix: string;
      apiKey: string;
      scopes: string[];
    };
    expect(created.scopes).toEqual(["memory:read"]);
    const listed = JSON.parse((await cli("list-keys", tenantA.tenantId)).stdout) as { id: string; name: string }[];
    expect(listed.find((k) => k.id === created.keyId)?.name).toBe("from the cli");
    expect((await cli("revoke-key", tenantA.tenantId, created.prefix)).stdout).toContain(created.keyId);
    const memory = await stack.memoryClient();
    expect((await rejection(memory.apiKeys.resolveApiKey({ apiKey: created.apiKey }, internalAuth))).reason).toBe("unauthenticated");
    await expect(cli("revoke-key", tenantA.tenantId)).rejects.toMatchObject({ code: 1 });
  });

  it("the CLI refuses a flag it does not know instead of ignoring it (a mistyped --read-only must not issue a read-write key)", async () => {
    const cli = (...args: string[]) =>
      run(process.execPath, [join(REPO_ROOT, "services/memory/dist/cli.js"), ...args], { env: { ...process.env, DATABASE_URL: stack.db.url } });
    const before = await listApiKeys(stack.ownerPool, tenantA.tenantId);
    await expect(cli("create-key", tenantA.tenantId, "typo", "--readonly")).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining("--readonly") });
    await expect(cli("create-key", tenantA.tenantId, "no user", "--user")).rejects.toMatchObject({ code: 2 });
    expect(await listApiKeys(stack.ownerPool, tenantA.tenantId)).toHaveLength(before.length);
  });

  it("the CLI takes values that start with a dash (a key prefix is base64url, so about one in 32 does)", async () => {
    const cli = (...args: string[]) =>
      run(process.execPath, [join(REPO_ROOT, "services/memory/dist/cli.js"), ...args], { env: { ...process.env, DATABASE_URL: stack.db.url } });
    const created = JSON.parse((await cli("create-key", tenantA.tenantId, "-dashed name", "--read-only")).stdout) as { keyId: string; prefix: string };
    const listed = JSON.parse((await cli("list-keys", tenantA.tenantId)).stdout) as { id: string; name: string }[];
    expect(listed.find((k) => k.id === created.keyId)?.name).toBe("-dashed name");
    // A prefix-shaped value with a leading dash reaches the lookup (and is unknown) instead of being refused as a flag.
    await expect(cli("revoke-key", tenantA.tenantId, "-Zz9_-Qa")).rejects.toMatchObject({ code: 1, stderr: expect.not.stringContaining("Unknown option") });
  });
});
