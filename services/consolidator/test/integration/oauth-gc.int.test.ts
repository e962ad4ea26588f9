/**
 * The OAuth GC job against the real memory service and PostgreSQL: grants are made through the
 * same RPCs the gateway uses, then aged in the database (the only way to make time pass), and the
 * job — run through runJob exactly as a worker runs it — removes what is stale and keeps the rest.
 */
import { createHash, randomBytes } from "node:crypto";
import { SCOPES } from "@3ngram/rpc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { OAUTH_GC_JOB } from "../../src/jobs/oauth-gc.js";
import { runJob } from "../../src/queues.js";
import type { MemoryPeer } from "../../src/peers.js";
import { consolidatorClient, otherJobDeps, silentLog, type MemoryRpc } from "../real-memory.js";

const REDIRECT = "http://127.0.0.1:9/cb";
const auth = { identity: { scopes: [SCOPES.internalAuth] } };

let stack: CoreServices;
let gatewaySide: MemoryRpc;
let consolidatorSide: MemoryPeer;
let others: Awaited<ReturnType<typeof otherJobDeps>>;
let tenant: { tenantId: string; userId: string };

beforeAll(async () => {
  stack = await startCoreServices({ label: "oauthgc" });
  gatewaySide = await stack.memoryClient();
  consolidatorSide = await consolidatorClient(stack);
  others = await otherJobDeps(stack);
  tenant = await stack.createTenant("gc tenant");
});

afterAll(async () => {
  consolidatorSide?.close();
  await others?.close();
  await stack?.close();
});

async function registerClient(name: string): Promise<string> {
  const { client } = await gatewaySide.oauth.registerOAuthClient({ metadataJson: JSON.stringify({ client_name: name, redirect_uris: [REDIRECT] }) }, auth);
  return client!.clientId;
}

/** A code for `clientId`, redeemed into a refresh token (the client is then "used"). */
async function grant(clientId: string): Promise<string> {
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const { code } = await gatewaySide.oauth.createAuthorizationCode(
    { clientId, redirectUri: REDIRECT, codeChallenge: challenge, scopes: ["memory:read"], resource: "http://127.0.0.1:1/mcp" },
    { identity: { tenantId: tenant.tenantId, userId: tenant.userId, scopes: [SCOPES.internalAuth] } },
  );
  const redeemed = await gatewaySide.oauth.redeemAuthorizationCode({ code, clientId, redirectUri: REDIRECT, codeVerifier: verifier }, auth);
  return redeemed.grant!.refreshToken!;
}

async function age(sql: string, params: unknown[]): Promise<void> {
  await stack.ownerPool.query(sql, params);
}

async function clientIds(): Promise<string[]> {
  return (await stack.ownerPool.query<{ client_id: string }>("SELECT client_id FROM oauth_clients ORDER BY client_id")).rows.map((r) => r.client_id);
}

describe("the OAuth GC job", () => {
  it("removes idle clients and expired codes and tokens, keeps clients in use", async () => {
    const neverUsed = await registerClient("never used");
    const usedLongAgo = await registerClient("used long ago");
    const usedRecently = await registerClient("used recently");
    const holdsLiveToken = await registerClient("holds a live refresh token");
    const fresh = await registerClient("registered today");

    await grant(usedLongAgo);
    await grant(usedRecently);
    await grant(holdsLiveToken);
    // An expired, unredeemed code of a client that stays.
    await gatewaySide.oauth.createAuthorizationCode(
      { clientId: fresh, redirectUri: REDIRECT, codeChallenge: "a".repeat(43), scopes: ["memory:read"], resource: "http://127.0.0.1:1/mcp" },
      { identity: { tenantId: tenant.tenantId, userId: tenant.userId, scopes: [SCOPES.internalAuth] } },
    );

    await age("UPDATE oauth_clients SET created_at = now() - interval '40 days' WHERE client_id = ANY($1)", [
      [neverUsed, usedLongAgo, usedRecently, holdsLiveToken],
    ]);
    await age("UPDATE oauth_clients SET last_used_at = now() - interval '31 days' WHERE client_id = ANY($1)", [[usedLongAgo, holdsLiveToken]]);
    await age("UPDATE oauth_clients SET last_used_at = now() - interval '2 days' WHERE client_id = $1", [usedRecently]);
    // usedLongAgo's refresh token has expired; holdsLiveToken's is still valid.
    await age("UPDATE oauth_refresh_tokens SET expires_at = now() - interval '3 days' WHERE client_id = $1", [usedLongAgo]);
    await age("UPDATE oauth_authorization_codes SET expires_at = now() - interval '2 days' WHERE client_id = $1", [fresh]);

    const outcome = await runJob(
      { id: "1", name: OAUTH_GC_JOB, data: {}, attempt: 1 },
      { ...others, oauthClientIdleDays: 30, memory: consolidatorSide, embedder: null as never, log: silentLog },
    );
    expect(outcome).toBe("collected");

    expect(await clientIds()).toEqual([fresh, holdsLiveToken, usedRecently].sort());
    const codes = await stack.ownerPool.query("SELECT 1 FROM oauth_authorization_codes WHERE client_id = $1", [fresh]);
    expect(codes.rows).toHaveLength(0);
    const tokens = await stack.ownerPool.query<{ client_id: string }>("SELECT client_id FROM oauth_refresh_tokens ORDER BY client_id");
    expect(tokens.rows.map((r) => r.client_id)).toEqual([holdsLiveToken, usedRecently].sort());

    // Nothing stale is left, so a second run removes nothing.
    const again = await consolidatorSide.oauth.collectOAuthGarbage({ clientIdleDays: 30 }, { identity: { scopes: [SCOPES.internalConsolidate] } });
    expect(again).toMatchObject({ clientsRemoved: 0, codesRemoved: 0, tokensRemoved: 0 });
  });

  it("is refused without the consolidate scope, and the runtime role cannot DELETE OAuth rows itself", async () => {
    await expect(gatewaySide.oauth.collectOAuthGarbage({ clientIdleDays: 30 }, auth)).rejects.toMatchObject({ reason: "insufficient_scope" });
    const client = await stack.ownerPool.connect();
    try {
      await client.query("BEGIN");
      await client.query("SET LOCAL ROLE threengram_app");
      await expect(client.query("DELETE FROM oauth_clients")).rejects.toThrow(/permission denied/);
    } finally {
      await client.query("ROLLBACK");
      client.release();
    }
  });
});
