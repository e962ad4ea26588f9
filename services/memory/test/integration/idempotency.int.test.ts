/**
 * Idempotency keys on remember and revise, through the memory service's gRPC API against a real
 * database: a repeat with the same key answers with the first write (same id, no second memory),
 * the same key on another request is refused, concurrent repeats store one memory, keys are per
 * tenant, and a key past its retention is free again.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices, type PublicMemoryClient } from "../../../../test/support/core-services.js";
import { rejection, writer, type TestTenant } from "../../../../test/support/calls.js";

let stack: CoreServices;
let memory: PublicMemoryClient;
let tenantA: TestTenant;
let tenantB: TestTenant;

beforeAll(async () => {
  stack = await startCoreServices({ label: "idempotency" });
  memory = await stack.publicMemoryClient();
  tenantA = await stack.createTenant("idem a");
  tenantB = await stack.createTenant("idem b");
});
afterAll(async () => {
  await stack?.close();
});

async function memoriesWith(tenantId: string, content: string): Promise<string[]> {
  const { rows } = await stack.ownerPool.query<{ id: string }>("SELECT id FROM memories WHERE tenant_id = $1 AND content = $2", [tenantId, content]);
  return rows.map((r) => r.id);
}

const note = (content: string, idempotencyKey: string) => ({
  memoryType: "decision" as const,
  topic: "idempotency",
  content,
  facts: [{ subject: "retries", predicate: "attempts.count", value: "3" }],
  idempotencyKey,
});

describe("remember with an idempotency key", () => {
  it("answers a repeat with the first write: same memory, same facts, nothing stored twice", async () => {
    const key = randomUUID();
    const content = `Clients retry writes with a key ${key}.`;
    const first = await memory.memories.remember(note(content, key), writer(tenantA));
    const again = await memory.memories.remember(note(content, key), writer(tenantA));
    expect(again.memory?.id).toBe(first.memory?.id);
    expect(again.facts.map((f) => f.id)).toEqual(first.facts.map((f) => f.id));
    expect(again.embedded).toBe(first.embedded);
    expect(await memoriesWith(tenantA.tenantId, content)).toEqual([first.memory!.id]);
    // One set of background jobs: the repeat records none.
    const { rows } = await stack.ownerPool.query("SELECT job_name FROM job_outbox WHERE payload->>'memoryId' = $1 ORDER BY job_name", [first.memory!.id]);
    expect(rows.map((r) => r.job_name)).toEqual(["extract-facts"]);
  });

  it("refuses the same key on a different request, naming the field, and stores nothing", async () => {
    const key = randomUUID();
    await memory.memories.remember(note(`First use of ${key}.`, key), writer(tenantA));
    const err = await rejection(memory.memories.remember(note(`Another body for ${key}.`, key), writer(tenantA)));
    expect(err.reason).toBe("idempotency_key_reused");
    expect(err.details.field).toBe("idempotencyKey");
    expect(await memoriesWith(tenantA.tenantId, `Another body for ${key}.`)).toEqual([]);
  });

  it("stores one memory for concurrent sends of one keyed write, and all of them answer with it", async () => {
    const key = randomUUID();
    const content = `Ten clients race with ${key}.`;
    const answers = await Promise.all(Array.from({ length: 10 }, () => memory.memories.remember(note(content, key), writer(tenantA))));
    const ids = new Set(answers.map((a) => a.memory?.id));
    expect(ids.size).toBe(1);
    expect(await memoriesWith(tenantA.tenantId, content)).toEqual([...ids]);
  });

  it("without a key, repeating the write is still a duplicate", async () => {
    const content = `No key here ${randomUUID()}.`;
    const first = await memory.memories.remember({ memoryType: "note", topic: "t", content }, writer(tenantA));
    const err = await rejection(memory.memories.remember({ memoryType: "note", topic: "t", content }, writer(tenantA)));
    expect(err.reason).toBe("duplicate_memory");
    expect(err.details.ids?.existing).toBe(first.memory!.id);
  });

  it("keeps keys per tenant: another tenant's key of the same name is its own", async () => {
    const key = randomUUID();
    const a = await memory.memories.remember(note(`Tenant A's write ${key}.`, key), writer(tenantA));
    const b = await memory.memories.remember(note(`Tenant B's write ${key}.`, key), writer(tenantB));
    expect(b.memory?.id).not.toBe(a.memory?.id);
    // Tenant A's key answers only tenant A.
    expect((await memory.memories.remember(note(`Tenant B's write ${key}.`, key), writer(tenantB))).memory?.id).toBe(b.memory?.id);
  });

  it("frees a key past its 24-hour retention", async () => {
    const key = randomUUID();
    const old = await memory.memories.remember(note(`Old write ${key}.`, key), writer(tenantA));
    await stack.ownerPool.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE idempotency_key = $1", [key]);
    const fresh = await memory.memories.remember(note(`New write ${key}.`, key), writer(tenantA));
    expect(fresh.memory?.id).not.toBe(old.memory?.id);
    const { rows } = await stack.ownerPool.query("SELECT memory_id FROM idempotency_keys WHERE idempotency_key = $1", [key]);
    expect(rows).toEqual([{ memory_id: fresh.memory!.id }]);
  });

  it("refuses a malformed key as invalid input", async () => {
    const err = await rejection(memory.memories.remember(note("Bad key.", "has spaces in it"), writer(tenantA)));
    expect(err.reason).toBe("invalid_input");
    expect(err.details.field).toBe("idempotencyKey");
  });
});

describe("revise with an idempotency key", () => {
  it("answers a repeat with the first revision instead of a conflict, and still refuses other revises", async () => {
    const base = await memory.memories.remember({ memoryType: "decision", topic: "db", content: `Use MySQL ${randomUUID()}.` }, writer(tenantA));
    const key = randomUUID();
    const successor = { memoryType: "decision" as const, topic: "db", content: `Use PostgreSQL ${key}.`, idempotencyKey: key };
    const first = await memory.memories.revise({ predecessorId: base.memory!.id, edgeIntent: "updates", ...successor }, writer(tenantA));
    const again = await memory.memories.revise({ predecessorId: base.memory!.id, edgeIntent: "updates", ...successor }, writer(tenantA));
    expect(again.memory?.id).toBe(first.memory?.id);
    expect(again.predecessorId).toBe(base.memory!.id);
    expect(again.edgeIntent).toBe("updates");
    expect(await memoriesWith(tenantA.tenantId, successor.content)).toEqual([first.memory!.id]);

    const other = await rejection(
      memory.memories.revise({ predecessorId: base.memory!.id, memoryType: "decision", topic: "db", content: `Use SQLite ${key}.` }, writer(tenantA)),
    );
    expect(other.reason).toBe("conflict");
    // The key names that revise: reusing it for a revise of something else is refused.
    const reused = await rejection(
      memory.memories.revise({ predecessorId: first.memory!.id, ...successor, content: `Use CockroachDB ${key}.` }, writer(tenantA)),
    );
    expect(reused.reason).toBe("idempotency_key_reused");
  });

  it("refuses a remember's key on a revise", async () => {
    const key = randomUUID();
    const stored = await memory.memories.remember(note(`Remembered with ${key}.`, key), writer(tenantA));
    const err = await rejection(
      memory.memories.revise(
        {
          predecessorId: stored.memory!.id,
          memoryType: "decision",
          topic: "idempotency",
          content: `Remembered with ${key}.`,
          idempotencyKey: key,
        },
        writer(tenantA),
      ),
    );
    expect(err.reason).toBe("idempotency_key_reused");
  });
});
