/**
 * The scope registry, alias/mapping resolution on writes and reads, listing and facets — over real
 * gRPC against the real memory service and a fresh PostgreSQL database.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryStatus as MemoryStatusNumber, MemoryType as MemoryTypeNumber } from "@3ngram/proto/common/v1/memory";
import type { RetrievalMode, memoryServices } from "@3ngram/proto/memory/v1";
import { SCOPES, type RpcClients } from "@3ngram/rpc";
import type { MemoryType } from "@3ngram/schema";
import { AppError } from "@3ngram/errors";
import { startCoreServices, type CoreServices, type PublicMemoryClient } from "../../../../test/support/core-services.js";
import { reader, rejection, writer } from "../../../../test/support/calls.js";

type Tenant = { tenantId: string; userId: string; apiKey: string };

let stack: CoreServices;
let memory: PublicMemoryClient;
/** Proto messages as they are, for what a public value cannot say (a number no enum holds). */
let raw: RpcClients<typeof memoryServices>;

let counter = 0;
/** A memory with unique content (the live-duplicate guard is per tenant). */
async function note(t: Tenant, fields: { scope?: string; project?: string; memoryType?: MemoryType; topic?: string } = {}) {
  counter += 1;
  const out = await memory.memories.remember(
    { memoryType: fields.memoryType ?? "note", topic: fields.topic ?? `topic ${counter}`, content: `scoped memory number ${counter}`, ...fields },
    writer(t),
  );
  // A write answers with the memory's identity only; read it back whole.
  return (await memory.memories.getMemories({ ids: [out.memory!.id] }, reader(t))).memories[0]!;
}

async function listIds(t: Tenant, request: Parameters<typeof memory.memories.listMemories>[0]): Promise<string[]> {
  return (await memory.memories.listMemories(request, reader(t))).memories.map((m) => m.id);
}

async function registry(t: Tenant) {
  return memory.scopes.listScopes({}, reader(t));
}

beforeAll(async () => {
  stack = await startCoreServices({ label: "scopes" });
  memory = await stack.publicMemoryClient();
  raw = await stack.memoryClient();
});
afterAll(async () => {
  await stack?.close();
});

describe("scope registry", () => {
  it("starts every tenant with personal and work and no retrieval default", async () => {
    const t = await stack.createTenant("starter");
    const out = await registry(t);
    expect(out.scopes.map((s) => ({ name: s.name, aliases: s.aliases, projects: s.projects }))).toEqual([
      { name: "personal", aliases: [], projects: [] },
      { name: "work", aliases: [], projects: [] },
    ]);
    expect(out.scopes.every((s) => s.createdAt !== undefined && s.id.length === 36)).toBe(true);
    expect(out.policy).toMatchObject({ mode: "off" });
    expect(out.policy?.scope).toBeNull();
  });

  it("creates scopes with aliases, listed in name order", async () => {
    const t = await stack.createTenant("create");
    const created = await memory.scopes.createScope({ name: "side-projects", aliases: ["side", "hobby", "side"] }, writer(t));
    // Repeats are dropped; the order given is kept.
    expect(created.scope).toMatchObject({ name: "side-projects", aliases: ["side", "hobby"], projects: [] });
    await memory.scopes.createScope({ name: "alpha", aliases: [] }, writer(t));
    expect((await registry(t)).scopes.map((s) => s.name)).toEqual(["alpha", "personal", "side-projects", "work"]);
  });

  it("keeps names and aliases unique across the tenant's names and aliases", async () => {
    const t = await stack.createTenant("unique");
    await memory.scopes.createScope({ name: "clients", aliases: ["customers"] }, writer(t));
    const cases: Array<[() => Promise<unknown>, string, RegExp]> = [
      // A name equal to an existing name, or to another scope's alias.
      [() => memory.scopes.createScope({ name: "work", aliases: [] }, writer(t)), "name", /already named "work"/],
      [() => memory.scopes.createScope({ name: "customers", aliases: [] }, writer(t)), "name", /"customers" is already an alias of scope "clients"/],
      // An alias equal to another scope's name or alias.
      [() => memory.scopes.createScope({ name: "leads", aliases: ["prospects", "personal"] }, writer(t)), "aliases.1", /already named "personal"/],
      [() => memory.scopes.createScope({ name: "leads", aliases: ["customers"] }, writer(t)), "aliases.0", /alias of scope "clients"/],
      [() => memory.scopes.setScopeAliases({ name: "work", aliases: ["customers"] }, writer(t)), "aliases.0", /alias of scope "clients"/],
      [() => memory.scopes.setScopeAliases({ name: "work", aliases: ["clients"] }, writer(t)), "aliases.0", /already named "clients"/],
      [() => memory.scopes.renameScope({ name: "work", newName: "customers" }, writer(t)), "newName", /alias of scope "clients"/],
      [() => memory.scopes.renameScope({ name: "work", newName: "personal" }, writer(t)), "newName", /already named "personal"/],
    ];
    for (const [call, field, message] of cases) {
      const err = await rejection(call());
      expect(err.reason).toBe("conflict");
      expect(err.details.field).toBe(field);
      expect(err.message).toMatch(message);
    }
    // Nothing changed.
    const after = await registry(t);
    expect(after.scopes.map((s) => [s.name, s.aliases])).toEqual([
      ["clients", ["customers"]],
      ["personal", []],
      ["work", []],
    ]);
  });

  it("validates names, aliases and projects, naming the field", async () => {
    const t = await stack.createTenant("validate");
    const cases: Array<[() => Promise<unknown>, string]> = [
      [() => memory.scopes.createScope({ name: "Not Kebab", aliases: [] }, writer(t)), "name"],
      [() => memory.scopes.createScope({ name: "a".repeat(65), aliases: [] }, writer(t)), "name"],
      [() => memory.scopes.createScope({ name: "ok", aliases: ["fine", "Bad_Alias"] }, writer(t)), "aliases.1"],
      [() => memory.scopes.createScope({ name: "ok", aliases: Array.from({ length: 17 }, (_, i) => `a${i}`) }, writer(t)), "aliases"],
      [() => memory.scopes.createScope({ name: "ok", aliases: ["ok"] }, writer(t)), "aliases.0"],
      [() => memory.scopes.setScopeMappings({ name: "work", projects: Array.from({ length: 65 }, (_, i) => `p${i}`) }, writer(t)), "projects"],
      [() => memory.scopes.setScopeMappings({ name: "work", projects: [" "] }, writer(t)), "projects.0"],
      [() => memory.scopes.renameScope({ name: "work", newName: "work" }, writer(t)), "newName"],
      [() => memory.scopes.setRetrievalDefault({ mode: "default" }, writer(t)), "scope"],
      [() => memory.scopes.setRetrievalDefault({ mode: "require", scope: "work" }, writer(t)), "scope"],
      // A mode no enum value names can only come from a foreign client: an unknown number.
      [() => raw.scopes.setRetrievalDefault({ mode: 9 as RetrievalMode }, writer(t)), "mode"],
    ];
    for (const [call, field] of cases) {
      const err = await rejection(call());
      expect(err.reason, field).toBe("invalid_input");
      expect(err.details.field).toBe(field);
    }
    // 16 aliases and 64 projects are fine.
    const full = await memory.scopes.createScope({ name: "ok", aliases: Array.from({ length: 16 }, (_, i) => `a${i}`) }, writer(t));
    expect(full.scope?.aliases).toHaveLength(16);
    const mapped = await memory.scopes.setScopeMappings({ name: "ok", projects: Array.from({ length: 64 }, (_, i) => `p${i}`) }, writer(t));
    expect(mapped.scope?.projects).toHaveLength(64);
  });

  it("answers not_found for a scope it does not know by name (an alias is not a name)", async () => {
    const t = await stack.createTenant("notfound");
    await memory.scopes.createScope({ name: "research", aliases: ["papers"] }, writer(t));
    for (const name of ["nowhere", "papers"]) {
      for (const call of [
        () => memory.scopes.renameScope({ name, newName: "elsewhere" }, writer(t)),
        () => memory.scopes.setScopeAliases({ name, aliases: [] }, writer(t)),
        () => memory.scopes.setScopeMappings({ name, projects: [] }, writer(t)),
        () => memory.scopes.deleteScope({ name }, writer(t)),
      ]) {
        const err = await rejection(call());
        expect(err.reason).toBe("not_found");
        expect(err.details.field).toBe("name");
      }
    }
    const hint = await rejection(memory.scopes.deleteScope({ name: "papers" }, writer(t)));
    expect(hint.message).toMatch(/alias of "research"/);
    expect((await registry(t)).scopes.map((s) => s.name)).toEqual(["personal", "research", "work"]);
  });

  it("needs memory:write for registry changes and memory:read to list", async () => {
    const t = await stack.createTenant("scopes-authz");
    for (const call of [
      () => memory.scopes.createScope({ name: "x", aliases: [] }, reader(t)),
      () => memory.scopes.renameScope({ name: "work", newName: "job" }, reader(t)),
      () => memory.scopes.setScopeAliases({ name: "work", aliases: ["job"] }, reader(t)),
      () => memory.scopes.setScopeMappings({ name: "work", projects: ["p"] }, reader(t)),
      () => memory.scopes.deleteScope({ name: "work" }, reader(t)),
      () => memory.scopes.setRetrievalDefault({ mode: "require" }, reader(t)),
    ]) {
      expect((await rejection(call())).reason).toBe("insufficient_scope");
    }
    const writeOnly = { identity: { tenantId: t.tenantId, userId: t.userId, scopes: [SCOPES.write] } };
    expect((await rejection(memory.scopes.listScopes({}, writeOnly))).reason).toBe("insufficient_scope");
    expect((await rejection(memory.memories.listMemories({}, writeOnly))).reason).toBe("insufficient_scope");
    expect((await rejection(memory.memories.getFacets({}, writeOnly))).reason).toBe("insufficient_scope");
    expect((await registry(t)).scopes.map((s) => s.name)).toEqual(["personal", "work"]);
  });

  it("serialises concurrent registry writes: one alias, many claimants, one winner", async () => {
    const t = await stack.createTenant("race");
    // Hold the tenant's registry lock so every claimant queues on it, then let them all go at once:
    // without the lock each would check "alias free" before any insert committed.
    const holder = await stack.ownerPool.connect();
    const racers = 8;
    let attempts: Promise<PromiseSettledResult<unknown>[]>;
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT pg_advisory_xact_lock(hashtextextended('scopes/' || $1, 0))", [t.tenantId]);
      attempts = Promise.allSettled(Array.from({ length: racers }, (_, i) => memory.scopes.createScope({ name: `racer-${i}`, aliases: ["prize"] }, writer(t))));
      for (let polls = 0; ; polls += 1) {
        const { rows } = await stack.ownerPool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'",
        );
        if (rows[0]!.n === racers) break;
        if (polls > 2_000) throw new Error(`only ${rows[0]!.n} of ${racers} registry writes queued on the tenant lock`);
        await sleep(5);
      }
    } finally {
      await holder.query("COMMIT");
      holder.release();
    }
    const settled = await attempts;
    const won = settled.filter((a) => a.status === "fulfilled");
    const lost = settled.filter((a): a is PromiseRejectedResult => a.status === "rejected");
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(racers - 1);
    for (const l of lost) expect((l.reason as AppError).reason).toBe("conflict");
    const holders = (await registry(t)).scopes.filter((s) => s.aliases.includes("prize"));
    expect(holders).toHaveLength(1);
  });
});

describe("aliases and mappings on writes and reads", () => {
  it("lands a write to an alias in the canonical scope and finds it by alias or name", async () => {
    const t = await stack.createTenant("alias-rw");
    await memory.scopes.createScope({ name: "engineering", aliases: ["eng", "dev"] }, writer(t));
    const viaAlias = await note(t, { scope: "eng" });
    expect(viaAlias.scope).toBe("engineering");
    const unrelated = await note(t, { scope: "work" });
    for (const filter of ["eng", "dev", "engineering"]) {
      expect(await listIds(t, { scope: filter })).toEqual([viaAlias.id]);
    }
    expect(await listIds(t, { scope: "work" })).toEqual([unrelated.id]);
    // An unregistered scope is free text: stored and filtered as given.
    const free = await note(t, { scope: "scratch" });
    expect(free.scope).toBe("scratch");
    expect(await listIds(t, { scope: "scratch" })).toEqual([free.id]);
  });

  it("matches memories stored under an alias before it became one", async () => {
    const t = await stack.createTenant("alias-late");
    const early = await note(t, { scope: "ops" });
    await memory.scopes.createScope({ name: "operations", aliases: [] }, writer(t));
    const canonical = await note(t, { scope: "operations" });
    expect(await listIds(t, { scope: "operations" })).toEqual([canonical.id]);
    await memory.scopes.setScopeAliases({ name: "operations", aliases: ["ops"] }, writer(t));
    expect(await listIds(t, { scope: "operations" })).toEqual([canonical.id, early.id]);
    expect(await listIds(t, { scope: "ops" })).toEqual([canonical.id, early.id]);
    // set_aliases replaces the whole list: without the alias, "ops" is plain text again.
    await memory.scopes.setScopeAliases({ name: "operations", aliases: ["sre"] }, writer(t));
    expect((await registry(t)).scopes.find((s) => s.name === "operations")?.aliases).toEqual(["sre"]);
    expect(await listIds(t, { scope: "ops" })).toEqual([early.id]);
    expect(await listIds(t, { scope: "operations" })).toEqual([canonical.id]);
    // The freed alias can go to another scope.
    await memory.scopes.setScopeAliases({ name: "work", aliases: ["ops"] }, writer(t));
    expect((await note(t, { scope: "ops" })).scope).toBe("work");
  });

  it("routes a write with only a mapped project to its scope; an explicit scope wins", async () => {
    const t = await stack.createTenant("mappings");
    await memory.scopes.createScope({ name: "home", aliases: ["house"] }, writer(t));
    const mapped = await memory.scopes.setScopeMappings({ name: "home", projects: ["garden", "kitchen", "garden"] }, writer(t));
    expect(mapped.scope?.projects).toEqual(["garden", "kitchen"]);
    expect((await note(t, { project: "garden" })).scope).toBe("home");
    expect((await note(t, { project: "garden", scope: "work" })).scope).toBe("work");
    expect((await note(t, { project: "unmapped" })).scope).toBe("personal");
    expect((await note(t)).scope).toBe("personal");

    // A project maps to one scope at most.
    const clash = await rejection(memory.scopes.setScopeMappings({ name: "work", projects: ["office", "kitchen"] }, writer(t)));
    expect(clash.reason).toBe("conflict");
    expect(clash.details.field).toBe("projects.1");
    expect(clash.message).toMatch(/mapped to scope "home"/);
    // Setting the same mappings on the same scope again is fine (full replacement, not a clash with itself).
    await memory.scopes.setScopeMappings({ name: "home", projects: ["kitchen"] }, writer(t));
    expect((await note(t, { project: "garden" })).scope).toBe("personal");
    await memory.scopes.setScopeMappings({ name: "work", projects: ["garden"] }, writer(t));
    expect((await note(t, { project: "garden" })).scope).toBe("work");
  });

  it("renames a scope keeping old memories reachable; the old name becomes an alias", async () => {
    const t = await stack.createTenant("rename");
    await memory.scopes.createScope({ name: "acme", aliases: ["acme-corp"] }, writer(t));
    await memory.scopes.setScopeMappings({ name: "acme", projects: ["rocket"] }, writer(t));
    const old = await note(t, { scope: "acme" });
    const renamed = await memory.scopes.renameScope({ name: "acme", newName: "acme-inc" }, writer(t));
    expect(renamed.scope).toMatchObject({ name: "acme-inc", aliases: ["acme-corp", "acme"], projects: ["rocket"] });
    const fresh = await note(t, { scope: "acme" });
    expect(fresh.scope).toBe("acme-inc");
    expect((await note(t, { project: "rocket" })).scope).toBe("acme-inc");
    // The old memory keeps its stored scope text and is found under either name.
    const [stored] = (await memory.memories.getMemories({ ids: [old.id] }, reader(t))).memories;
    expect(stored?.scope).toBe("acme");
    for (const filter of ["acme-inc", "acme", "acme-corp"]) {
      const ids = await listIds(t, { scope: filter });
      expect(ids).toContain(old.id);
      expect(ids).toContain(fresh.id);
      expect(ids).toHaveLength(3);
    }
    // Promoting one of its own aliases to be the name.
    const promoted = await memory.scopes.renameScope({ name: "acme-inc", newName: "acme-corp" }, writer(t));
    expect(promoted.scope).toMatchObject({ name: "acme-corp", aliases: ["acme", "acme-inc"] });
    expect(await listIds(t, { scope: "acme" })).toHaveLength(3);
  });

  it("refuses a rename that would push the aliases past 16", async () => {
    const t = await stack.createTenant("rename-full");
    await memory.scopes.createScope({ name: "crowded", aliases: Array.from({ length: 16 }, (_, i) => `c${i}`) }, writer(t));
    const err = await rejection(memory.scopes.renameScope({ name: "crowded", newName: "roomy" }, writer(t)));
    expect(err.reason).toBe("conflict");
    expect(err.message).toMatch(/remove an alias/);
    // Promoting an alias frees a slot, so that rename is fine.
    const ok = await memory.scopes.renameScope({ name: "crowded", newName: "c0" }, writer(t));
    expect(ok.scope?.aliases).toHaveLength(16);
    expect(ok.scope?.aliases).toContain("crowded");
  });

  it("deletes only the registry entry; memories keep their scope text", async () => {
    const t = await stack.createTenant("delete");
    await memory.scopes.createScope({ name: "temp", aliases: ["tmp"] }, writer(t));
    const kept = await note(t, { scope: "tmp" });
    expect(kept.scope).toBe("temp");
    const aliased = await note(t, { scope: "personal" });
    const deleted = await memory.scopes.deleteScope({ name: "temp" }, writer(t));
    expect(deleted).toMatchObject({ name: "temp", policy: { mode: "off" } });
    expect((await registry(t)).scopes.map((s) => s.name)).toEqual(["personal", "work"]);
    expect((await memory.memories.getMemories({ ids: [kept.id] }, reader(t))).memories[0]?.scope).toBe("temp");
    expect(await listIds(t, { scope: "temp" })).toEqual([kept.id]);
    // The alias went with the entry: "tmp" is plain text now.
    expect(await listIds(t, { scope: "tmp" })).toEqual([]);
    expect((await note(t, { scope: "tmp" })).scope).toBe("tmp");
    expect(await listIds(t, { scope: "personal" })).toEqual([aliased.id]);
    // The name is free again.
    await memory.scopes.createScope({ name: "temp", aliases: [] }, writer(t));
  });
});

describe("retrieval default", () => {
  it("stores the canonical name, follows a rename and fails closed on delete", async () => {
    const t = await stack.createTenant("policy");
    await memory.scopes.createScope({ name: "focus", aliases: ["main"] }, writer(t));
    const set = await memory.scopes.setRetrievalDefault({ mode: "default", scope: "main" }, writer(t));
    expect(set.policy).toMatchObject({ mode: "default", scope: "focus" });
    await memory.scopes.renameScope({ name: "focus", newName: "deep-focus" }, writer(t));
    expect((await registry(t)).policy).toMatchObject({ mode: "default", scope: "deep-focus" });
    // Deleting another scope leaves the policy alone.
    expect((await memory.scopes.deleteScope({ name: "work" }, writer(t))).policy).toMatchObject({ mode: "default", scope: "deep-focus" });
    const deleted = await memory.scopes.deleteScope({ name: "deep-focus" }, writer(t));
    expect(deleted.policy?.mode).toBe("require");
    expect(deleted.policy?.scope).toBeNull();
    expect((await registry(t)).policy?.mode).toBe("require");
  });

  it("needs a registered scope for mode default; off and require take none", async () => {
    const t = await stack.createTenant("policy-modes");
    const unknown = await rejection(memory.scopes.setRetrievalDefault({ mode: "default", scope: "nowhere" }, writer(t)));
    expect(unknown.reason).toBe("not_found");
    expect(unknown.details.field).toBe("scope");
    expect((await registry(t)).policy?.mode).toBe("off");
    expect((await memory.scopes.setRetrievalDefault({ mode: "require" }, writer(t))).policy).toEqual(expect.objectContaining({ mode: "require" }));
    expect((await memory.scopes.setRetrievalDefault({ mode: "default", scope: "work" }, writer(t))).policy).toMatchObject({ mode: "default", scope: "work" });
    const off = await memory.scopes.setRetrievalDefault({ mode: "off" }, writer(t));
    expect(off.policy?.mode).toBe("off");
    expect(off.policy?.scope).toBeNull();
  });
});

describe("tenant isolation of the registry", () => {
  it("gives each tenant its own registry; another tenant's names are unknown", async () => {
    const a = await stack.createTenant("iso a");
    const b = await stack.createTenant("iso b");
    await memory.scopes.createScope({ name: "secret-plans", aliases: ["plans"] }, writer(a));
    await memory.scopes.setScopeMappings({ name: "secret-plans", projects: ["moonshot"] }, writer(a));
    await memory.scopes.setRetrievalDefault({ mode: "default", scope: "secret-plans" }, writer(a));
    const aMemory = await note(a, { scope: "plans" });

    // B sees only its own registry and policy.
    const bView = await registry(b);
    expect(bView.scopes.map((s) => s.name)).toEqual(["personal", "work"]);
    expect(bView.policy?.mode).toBe("off");
    // A's names answer exactly like names that exist nowhere.
    for (const name of ["secret-plans", "never-existed"]) {
      for (const call of [
        () => memory.scopes.renameScope({ name, newName: "mine" }, writer(b)),
        () => memory.scopes.setScopeAliases({ name, aliases: [] }, writer(b)),
        () => memory.scopes.setScopeMappings({ name, projects: [] }, writer(b)),
        () => memory.scopes.deleteScope({ name }, writer(b)),
      ]) {
        const err = await rejection(call());
        expect(err.reason).toBe("not_found");
        expect(err.message.replace(name, "NAME")).toMatch(/^name: no scope is named "NAME"$/);
      }
      const policy = await rejection(memory.scopes.setRetrievalDefault({ mode: "default", scope: name }, writer(b)));
      expect(policy.reason).toBe("not_found");
    }
    // A's names, aliases and mappings are free in B and do not steer B's writes or reads.
    expect((await note(b, { scope: "plans" })).scope).toBe("plans");
    expect((await note(b, { project: "moonshot" })).scope).toBe("personal");
    await memory.scopes.createScope({ name: "secret-plans", aliases: ["plans"] }, writer(b));
    await memory.scopes.setScopeMappings({ name: "secret-plans", projects: ["moonshot"] }, writer(b));
    expect(await listIds(b, { scope: "secret-plans" })).not.toContain(aMemory.id);
    // A is untouched.
    const aView = await registry(a);
    expect(aView.scopes.find((s) => s.name === "secret-plans")).toMatchObject({ aliases: ["plans"], projects: ["moonshot"] });
    expect(aView.policy).toMatchObject({ mode: "default", scope: "secret-plans" });
    expect(await listIds(a, { scope: "secret-plans" })).toEqual([aMemory.id]);
    const bFacets = await memory.memories.getFacets({}, reader(b));
    expect(bFacets.scopes).not.toContain("secret-plans");
  });
});

describe("listing and facets", () => {
  let t: Tenant;
  const made: Record<string, { id: string; recordedAt: Date }> = {};

  beforeAll(async () => {
    t = await stack.createTenant("listing");
    const specs: Array<[string, { scope?: string; project?: string; memoryType?: MemoryType }]> = [
      ["d1", { memoryType: "decision", scope: "work", project: "apollo" }],
      ["f1", { memoryType: "fact", scope: "work", project: "gemini" }],
      ["n1", { memoryType: "note", scope: "personal" }],
      ["d2", { memoryType: "decision", scope: "personal", project: "apollo" }],
      ["b1", { memoryType: "blocker", scope: "work", project: "mercury" }],
      ["archived", { memoryType: "note", scope: "archive-only", project: "gone" }],
      ["superseded", { memoryType: "note", scope: "old-only", project: "past" }],
    ];
    for (const [key, fields] of specs) {
      const m = await note(t, fields);
      made[key] = { id: m.id, recordedAt: new Date(m.recordedAt) };
    }
    await memory.memories.archive({ memoryId: made.archived!.id }, writer(t));
    const revised = await memory.memories.revise(
      {
        predecessorId: made.superseded!.id,
        memoryType: "event",
        topic: "successor",
        content: "the successor of a listed memory",
        scope: "personal",
      },
      writer(t),
    );
    const successor = (await memory.memories.getMemories({ ids: [revised.memory!.id] }, reader(t))).memories[0]!;
    made.successor = { id: successor.id, recordedAt: new Date(successor.recordedAt) };
  });

  const live = () => ["successor", "b1", "d2", "n1", "f1", "d1"].map((k) => made[k]!.id);

  it("lists live memories newest first with an exact total", async () => {
    const all = await memory.memories.listMemories({}, reader(t));
    // Neither the archived memory nor the superseded one (only its successor) is listed.
    expect(all.memories.map((m) => m.id)).toEqual(live());
    expect(all.total).toBe(6);
    expect(all.memories[1]).toMatchObject({ memoryType: "blocker", scope: "work", project: "mercury", status: "active" });
    // Pages keep the order; total stays the full count; past the end is empty with the total.
    const page = await memory.memories.listMemories({ limit: 2, offset: 1 }, reader(t));
    expect(page.memories.map((m) => m.id)).toEqual(live().slice(1, 3));
    expect(page.total).toBe(6);
    const beyond = await memory.memories.listMemories({ limit: 10, offset: 50 }, reader(t));
    expect(beyond).toMatchObject({ memories: [], total: 6 });
  });

  it("filters by type, scope, projects and status", async () => {
    const ids = (...keys: string[]) => keys.map((k) => made[k]!.id);
    expect(await listIds(t, { memoryTypes: ["decision"] })).toEqual(ids("d2", "d1"));
    expect(await listIds(t, { memoryTypes: ["decision", "blocker"] })).toEqual(ids("b1", "d2", "d1"));
    expect(await listIds(t, { scope: "work" })).toEqual(ids("b1", "f1", "d1"));
    expect(await listIds(t, { project: ["apollo"] })).toEqual(ids("d2", "d1"));
    expect(await listIds(t, { project: ["apollo", "mercury"] })).toEqual(ids("b1", "d2", "d1"));
    expect(await listIds(t, { scope: "work", project: ["apollo", "gemini"], memoryTypes: ["fact"] })).toEqual(ids("f1"));
    expect(await listIds(t, { status: "archived" })).toEqual(ids("archived"));
    expect(await listIds(t, { status: "active", scope: "old-only" })).toEqual([]);
    const filtered = await memory.memories.listMemories({ scope: "work", limit: 1 }, reader(t));
    expect(filtered.total).toBe(3);
  });

  it("filters by recorded time, both bounds inclusive", async () => {
    const at = (k: string) => made[k]!.recordedAt.toISOString();
    // The stored instants may share a millisecond, so the expectation is computed from them.
    const inWindow = (from: Date, to: Date) =>
      live().filter((id) => Object.values(made).some((m) => m.id === id && m.recordedAt >= from && m.recordedAt <= to));
    const window = await listIds(t, { recordedAfter: at("n1"), recordedBefore: at("b1") });
    expect(window).toEqual(inWindow(made.n1!.recordedAt, made.b1!.recordedAt));
    expect(window).toContain(made.n1!.id);
    expect(window).toContain(made.b1!.id);
    expect(window).not.toContain(made.d1!.id);
    const exact = await listIds(t, { recordedAfter: at("f1"), recordedBefore: at("f1") });
    expect(exact).toContain(made.f1!.id);
    expect(await listIds(t, { recordedBefore: at("d1") })).toEqual(inWindow(new Date(0), made.d1!.recordedAt));
  });

  it("rejects bad filters naming the field", async () => {
    const cases: Array<[Parameters<typeof memory.memories.listMemories>[0], string]> = [
      [{ limit: 101 }, "limit"],
      [{ offset: 100_001 }, "offset"],
      [{ scope: "Not Kebab" }, "scope"],
      [{ recordedAfter: new Date("2030-01-02T00:00:00Z").toISOString(), recordedBefore: new Date("2030-01-01T00:00:00Z").toISOString() }, "recordedBefore"],
    ];
    for (const [request, field] of cases) {
      const err = await rejection(memory.memories.listMemories(request, reader(t)));
      expect(err.reason).toBe("invalid_input");
      expect(err.details.field).toBe(field);
    }
    // A type or status no enum value names can only come from a foreign client: an unknown number.
    const foreign: Array<[Parameters<typeof raw.memories.listMemories>[0], string]> = [
      [{ memoryTypes: [MemoryTypeNumber.NOTE, 99 as MemoryTypeNumber] }, "memoryTypes"],
      [{ status: 9 as MemoryStatusNumber }, "status"],
    ];
    for (const [request, field] of foreign) {
      const err = await rejection(raw.memories.listMemories(request, reader(t)));
      expect(err.reason).toBe("invalid_input");
      expect(err.details.field).toBe(field);
    }
  });

  it("lists the distinct scopes and projects of live memories, sorted", async () => {
    const facets = await memory.memories.getFacets({}, reader(t));
    expect(facets.scopes).toEqual(["personal", "work"]);
    expect(facets.projects).toEqual(["apollo", "gemini", "mercury"]);
    const other = await stack.createTenant("facets other");
    expect(await memory.memories.getFacets({}, reader(other))).toMatchObject({ scopes: [], projects: [] });
  });

  it("bounds each facet to 200 values", async () => {
    const many = await stack.createTenant("facets many");
    for (let i = 0; i < 205; i += 1) await note(many, { scope: `s-${String(i).padStart(3, "0")}`, project: `p${String(i).padStart(3, "0")}` });
    const facets = await memory.memories.getFacets({}, reader(many));
    expect(facets.scopes).toHaveLength(200);
    expect(facets.projects).toHaveLength(200);
    expect(facets.scopes[0]).toBe("s-000");
    expect(facets.scopes[199]).toBe("s-199");
  });
});
