import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CredentialSigner, createRpcClients, generateServiceKeyPair, SCOPES } from "@3ngram/rpc";
import { memoryServices } from "@3ngram/proto/memory/v1";
import type { MemoryType } from "@3ngram/proto/common/v1/memory";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import { rejection, writer } from "../../../../test/support/calls.js";
import { eventually } from "../../../../test/support/processes.js";

let stack: CoreServices;
let tenantA: { tenantId: string; userId: string; apiKey: string };
let tenantB: { tenantId: string; userId: string; apiKey: string };

async function memoryCount(tenantId: string): Promise<number> {
  const { rows } = await stack.ownerPool.query<{ n: string }>("SELECT count(*) AS n FROM memories WHERE tenant_id = $1", [tenantId]);
  return Number(rows[0]!.n);
}

beforeAll(async () => {
  stack = await startCoreServices({ label: "memory" });
  tenantA = await stack.createTenant("tenant a");
  tenantB = await stack.createTenant("tenant b");
});
afterAll(async () => {
  await stack?.close();
});

describe("memory service over gRPC", () => {
  it("stores a memory with its embedding and reads it back", async () => {
    const memory = await stack.publicMemoryClient();
    const content = "We store memories in PostgreSQL with pgvector.";
    const stored = await memory.memories.remember({ memoryType: "decision", topic: "storage", content, project: "core", tags: ["db"] }, writer(tenantA));
    expect(stored.embedded).toBe("done");
    expect(stored.memory?.scope).toBe("personal");
    const read = await memory.memories.getMemories({ ids: [stored.memory!.id] }, writer(tenantA));
    expect(read.notFound).toEqual([]);
    expect(read.memories).toHaveLength(1);
    expect(read.memories[0]).toMatchObject({
      id: stored.memory!.id,
      memoryType: "decision",
      content: "We store memories in PostgreSQL with pgvector.",
      project: "core",
      tags: ["db"],
      status: "active",
      embedded: "done",
      truncated: false,
    });
    const { rows } = await stack.ownerPool.query("SELECT event_kind, actor_kind, payload FROM memory_events WHERE memory_id = $1", [stored.memory!.id]);
    expect(rows).toEqual([{ event_kind: "create", actor_kind: "system", payload: { contentLength: content.length, embedded: "done" } }]);
  });

  it("refuses live duplicate content with the existing id", async () => {
    const memory = await stack.publicMemoryClient();
    const first = await memory.memories.remember({ memoryType: "note", topic: "dup", content: "Exactly the same words." }, writer(tenantA));
    const err = await rejection(memory.memories.remember({ memoryType: "fact", topic: "dup again", content: "Exactly the same words." }, writer(tenantA)));
    expect(err.reason).toBe("duplicate_memory");
    expect(err.details.ids?.existing).toBe(first.memory!.id);
    // Another tenant may hold the same content: the guard is per tenant.
    const other = await memory.memories.remember({ memoryType: "note", topic: "dup", content: "Exactly the same words." }, writer(tenantB));
    expect(other.memory!.id).not.toBe(first.memory!.id);
  });

  it("rejects invalid input naming the field and writes nothing", async () => {
    const memory = await stack.publicMemoryClient();
    const before = await memoryCount(tenantA.tenantId);
    const tooLong = await rejection(memory.memories.remember({ memoryType: "note", topic: "long", content: "x".repeat(2001) }, writer(tenantA)));
    expect(tooLong.reason).toBe("invalid_input");
    expect(tooLong.details.field).toBe("content");
    // A type no enum value names can only come from a foreign client: an unknown number.
    const raw = await stack.memoryClient();
    const badType = await rejection(raw.memories.remember({ memoryType: 99 as MemoryType, topic: "t", content: "c" }, writer(tenantA)));
    expect(badType.details.field).toBe("memoryType");
    const badScope = await rejection(memory.memories.remember({ memoryType: "note", topic: "t", content: "c", scope: "Not Kebab" }, writer(tenantA)));
    expect(badScope.details.field).toBe("scope");
    const badIds = await rejection(memory.memories.getMemories({ ids: ["not-a-uuid"] }, writer(tenantA)));
    expect(badIds.details.field).toBe("ids.0");
    expect(await memoryCount(tenantA.tenantId)).toBe(before);
  });

  it("answers a foreign id exactly like an unknown id", async () => {
    const memory = await stack.publicMemoryClient();
    const mine = await memory.memories.remember({ memoryType: "preference", topic: "tea", content: "Tenant A prefers green tea." }, writer(tenantA));
    const unknown = "01890a5d-ac96-774b-bcce-b302099a8057";
    const asB = await memory.memories.getMemories({ ids: [mine.memory!.id, unknown] }, writer(tenantB));
    expect(asB.memories).toEqual([]);
    expect(asB.notFound.sort()).toEqual([mine.memory!.id, unknown].sort());
    const storeForeign = await rejection(
      memory.maintenance.storeEmbedding(
        { memoryId: mine.memory!.id, model: "x", vector: [1, 0] },
        { identity: { tenantId: tenantB.tenantId, scopes: [SCOPES.internalEmbed] } },
      ),
    );
    const storeUnknown = await rejection(
      memory.maintenance.storeEmbedding(
        { memoryId: unknown, model: "x", vector: [1, 0] },
        { identity: { tenantId: tenantB.tenantId, scopes: [SCOPES.internalEmbed] } },
      ),
    );
    expect(storeForeign.reason).toBe("not_found");
    expect(storeForeign.message.replace(mine.memory!.id, "ID")).toBe(storeUnknown.message.replace(unknown, "ID"));
  });

  it("stores one embedding once when two stores of the same model race, with one embed_done event", async () => {
    const memory = await stack.publicMemoryClient();
    const id = (await memory.memories.remember({ memoryType: "note", topic: "race", content: `embedded twice at once ${Date.now()}` }, writer(tenantA))).memory!
      .id;
    const embedJob = { identity: { tenantId: tenantA.tenantId, scopes: [SCOPES.internalEmbed] } };
    // Hold the row so both stores read it first and then queue on its lock.
    const holder = await stack.ownerPool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM memories WHERE id = $1 FOR UPDATE", [id]);
      const stores = [0, 1].map(() => memory.maintenance.storeEmbedding({ memoryId: id, model: "race-model", vector: [1, 0, 0] }, embedJob));
      // Both are waiting on the lock once two backends of this database wait on it.
      await eventually(async () => {
        const { rows } = await stack.ownerPool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        expect(rows[0]!.n).toBe(2);
      });
      await holder.query("COMMIT");
      const outcomes = await Promise.all(stores);
      expect(outcomes.map((o) => o.stored).sort()).toEqual([false, true]);
    } finally {
      holder.release();
    }
    const { rows } = await stack.ownerPool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM memory_events WHERE memory_id = $1 AND event_kind = 'embed_done'",
      [id],
    );
    expect(rows[0]!.n).toBe(1);
  });

  it("refuses calls without a credential, with a forged one, or without the scope", async () => {
    const forgedPair = await generateServiceKeyPair();
    const forged = createRpcClients(memoryServices, {
      address: stack.memoryAddress,
      audience: "memory",
      signer: await CredentialSigner.fromJwk("gateway", forgedPair.privateJwk),
    });
    const forgedErr = await rejection(forged.memories.getMemories({ ids: ["01890a5d-ac96-774b-bcce-b302099a8057"] }, writer(tenantA)));
    expect(forgedErr.reason).toBe("unauthenticated");
    forged.close();

    // A credential for another audience (search) is not accepted by memory either.
    const wrongAudience = createRpcClients(memoryServices, { address: stack.memoryAddress, audience: "search", signer: await stack.keys.signer("gateway") });
    expect((await rejection(wrongAudience.memories.getMemories({ ids: ["01890a5d-ac96-774b-bcce-b302099a8057"] }, writer(tenantA)))).reason).toBe(
      "unauthenticated",
    );
    wrongAudience.close();

    const memory = await stack.publicMemoryClient();
    const readOnly = await rejection(
      memory.memories.remember(
        { memoryType: "note", topic: "t", content: "read-only caller" },
        { identity: { tenantId: tenantA.tenantId, scopes: [SCOPES.read] } },
      ),
    );
    expect(readOnly.reason).toBe("insufficient_scope");
    const noTenant = await rejection(memory.memories.getMemories({ ids: ["01890a5d-ac96-774b-bcce-b302099a8057"] }, { identity: { scopes: [SCOPES.read] } }));
    expect(noTenant.reason).toBe("unauthenticated");
  });

  it("resolves API keys to their tenant and refuses bad ones", async () => {
    const memory = await stack.publicMemoryClient();
    const auth = { identity: { scopes: [SCOPES.internalAuth] } };
    const resolved = await memory.apiKeys.resolveApiKey({ apiKey: tenantA.apiKey }, auth);
    expect(resolved).toMatchObject({ tenantId: tenantA.tenantId, userId: tenantA.userId, scopes: ["memory:read", "memory:write"] });
    const tampered = tenantA.apiKey.slice(0, -1) + (tenantA.apiKey.endsWith("A") ? "B" : "A");
    expect((await rejection(memory.apiKeys.resolveApiKey({ apiKey: tampered }, auth))).reason).toBe("unauthenticated");
    expect((await rejection(memory.apiKeys.resolveApiKey({ apiKey: "nonsense" }, auth))).reason).toBe("unauthenticated");
    // Only callers holding internal:auth may resolve keys.
    expect((await rejection(memory.apiKeys.resolveApiKey({ apiKey: tenantA.apiKey }, writer(tenantA)))).reason).toBe("insufficient_scope");
  });

  it("stores an out-of-band embedding once per model", async () => {
    const memory = await stack.publicMemoryClient();
    const stored = await memory.memories.remember({ memoryType: "fact", topic: "vec", content: "A memory whose vector is replaced." }, writer(tenantA));
    const embed = { identity: { tenantId: tenantA.tenantId, scopes: [SCOPES.internalEmbed] } };
    const vector = Array.from({ length: 8 }, (_, i) => (i === 0 ? 1 : 0));
    expect((await memory.maintenance.storeEmbedding({ memoryId: stored.memory!.id, model: "other-model-8", vector }, embed)).stored).toBe(true);
    expect((await memory.maintenance.storeEmbedding({ memoryId: stored.memory!.id, model: "other-model-8", vector }, embed)).stored).toBe(false);
    const bad = await rejection(memory.maintenance.storeEmbedding({ memoryId: stored.memory!.id, model: "m", vector: [] }, embed));
    expect(bad.details.field).toBe("vector");
    const { rows } = await stack.ownerPool.query("SELECT embedding_model, embedding_dim FROM memories WHERE id = $1", [stored.memory!.id]);
    expect(rows[0]).toEqual({ embedding_model: "other-model-8", embedding_dim: 8 });
  });
});

describe("database guarantees for the runtime role", () => {
  async function asRuntimeRole(tenantId: string, sql: string, params: unknown[] = []): Promise<unknown> {
    const client = await stack.ownerPool.connect();
    try {
      await client.query("BEGIN");
      await client.query("SET LOCAL ROLE threengram_app");
      await client.query("SELECT set_config('app.tenant_id', $1, true)", [tenantId]);
      return await client.query(sql, params);
    } finally {
      await client.query("ROLLBACK");
      client.release();
    }
  }

  it("cannot delete memories or rewrite their content", async () => {
    await expect(asRuntimeRole(tenantA.tenantId, "DELETE FROM memories")).rejects.toThrow(/permission denied/);
    await expect(asRuntimeRole(tenantA.tenantId, "UPDATE memories SET content = 'rewritten'")).rejects.toThrow(/permission denied/);
    await expect(asRuntimeRole(tenantA.tenantId, "DELETE FROM memory_events")).rejects.toThrow(/permission denied/);
  });

  it("sees only its own tenant's rows even without a tenant predicate", async () => {
    const result = (await asRuntimeRole(tenantB.tenantId, "SELECT DISTINCT tenant_id FROM memories")) as { rows: { tenant_id: string }[] };
    expect(result.rows.map((r) => r.tenant_id)).toEqual([tenantB.tenantId]);
    const none = (await asRuntimeRole("", "SELECT count(*)::int AS n FROM memories")) as { rows: { n: number }[] };
    expect(none.rows[0]!.n).toBe(0);
  });

  it("marks full-text matching leakproof so RLS-scoped searches can use the GIN index", async () => {
    const { rows } = await stack.ownerPool.query<{ proleakproof: boolean }>(
      "SELECT proleakproof FROM pg_proc WHERE oid = 'pg_catalog.ts_match_vq(tsvector, tsquery)'::regprocedure",
    );
    expect(rows[0]?.proleakproof).toBe(true);
  });

  it("cannot insert a row for another tenant", async () => {
    await expect(
      asRuntimeRole(
        tenantA.tenantId,
        "INSERT INTO memories (id, tenant_id, memory_type, topic, content, content_hash) VALUES (gen_random_uuid(), $1, 'note', 't', 'c', 'h')",
        [tenantB.tenantId],
      ),
    ).rejects.toThrow(/row-level security/);
  });
});
