import { uuidv7 } from "uuidv7";
import { withTenant } from "@3ngram/db";
import { archiveMemory, lockMemory } from "../db/lifecycle.js";
import { insertEvent } from "../db/memories.js";
import type { Actor, MemoryDeps } from "./deps.js";
import { memoryNotFound, notLive } from "./lifecycle-guard.js";

export interface ArchiveResult {
  id: string;
  status: "archived";
}

/**
 * Archives a live memory: it leaves default listings and searches but stays readable by id, with
 * its content and valid time untouched. There is no way back. A memory that is already archived or
 * superseded answers conflict; unknown and other tenants' ids answer not_found alike.
 */
export async function archive(deps: MemoryDeps, actor: Actor, input: { memoryId: string }): Promise<ArchiveResult> {
  const memoryId = input.memoryId.toLowerCase();
  await withTenant(deps.pool, { role: deps.runtimeRole, tenantId: actor.tenantId }, async (db) => {
    const memory = await lockMemory(db, actor.tenantId, memoryId);
    if (memory === null) throw memoryNotFound(memoryId);
    const blocked = await notLive(db, actor.tenantId, memory);
    if (blocked) throw blocked;
    await archiveMemory(db, actor.tenantId, memoryId, { close: false });
    await insertEvent(db, { id: uuidv7(), tenantId: actor.tenantId, memoryId, kind: "archive", actor: actor.kind, payload: { via: "archive" } });
  });
  deps.log.info({ memoryId }, "memory archived");
  return { id: memoryId, status: "archived" };
}
