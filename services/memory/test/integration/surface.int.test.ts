/**
 * ReadMemory (the MCP memory resource's read) over real gRPC against the real memory service on a
 * fresh PostgreSQL database: the whole stored content however long, the same answer for unknown
 * and other tenants' ids, and the read scope.
 */
import { randomUUID } from "node:crypto";
import type { ArchiveService } from "@3ngram/proto/memory/v1";
import { SCOPES, type RpcMethods } from "@3ngram/rpc";
import { MAX_GET_CONTENT_CHARS, MAX_IMPORT_CONTENT_LENGTH } from "@3ngram/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rejection, reader, writer, type TestTenant } from "../../../../test/support/calls.js";
import { startCoreServices, type CoreServices, type PublicMemoryClient } from "../../../../test/support/core-services.js";
import { importFile } from "../../../../test/support/archive.js";

let stack: CoreServices;
let memory: PublicMemoryClient;
let archiveRpc: RpcMethods<typeof ArchiveService>;
let owner: TestTenant;
let stranger: TestTenant;

beforeAll(async () => {
  stack = await startCoreServices({ label: "memory-surface" });
  memory = await stack.publicMemoryClient();
  archiveRpc = (await stack.memoryClient()).archive;
  owner = await stack.createTenant("read-memory owner");
  stranger = await stack.createTenant("read-memory stranger");
});

afterAll(async () => {
  await stack?.close();
});

describe("ReadMemory", () => {
  it("returns an imported memory at the import bound whole, where GetMemories cuts it", async () => {
    const content = `${randomUUID()} ${"a long imported body. ".repeat(20_000)}`.slice(0, MAX_IMPORT_CONTENT_LENGTH);
    const ndjson = JSON.stringify({ kind: "memory", key: "whole", memoryType: "note", topic: "long", content: content.trim() }) + "\n";
    const imported = await importFile(archiveRpc, { format: "3ngram", ndjson }, writer(owner));
    const id = imported.results[0]!.id!;
    const expected = content.trim();

    const read = await memory.memories.readMemory({ id }, reader(owner));
    expect(read).toMatchObject({ id, content: expected, contentLength: expected.length, memoryType: "note", topic: "long" });
    expect(read.content.length).toBeGreaterThan(MAX_GET_CONTENT_CHARS);

    const bounded = await memory.memories.getMemories({ ids: [id], maxContentChars: MAX_GET_CONTENT_CHARS }, reader(owner));
    expect(bounded.memories[0]).toMatchObject({ truncated: true, contentLength: expected.length });
  });

  it("answers another tenant's id exactly like an unknown one", async () => {
    const mine = await memory.memories.remember({ memoryType: "note", topic: "mine", content: `Private ${randomUUID()}`, tags: [], facts: [] }, writer(owner));
    const foreign = await rejection(memory.memories.readMemory({ id: mine.memory!.id }, reader(stranger)));
    const unknownId = randomUUID();
    const unknown = await rejection(memory.memories.readMemory({ id: unknownId }, reader(stranger)));
    expect(foreign.reason).toBe("not_found");
    expect(unknown.reason).toBe("not_found");
    expect(foreign.message.replace(mine.memory!.id, "<id>")).toBe(unknown.message.replace(unknownId, "<id>"));
  });

  it("needs memory:read and a well-formed id", async () => {
    const write = { identity: { tenantId: owner.tenantId, userId: owner.userId, scopes: [SCOPES.write] } };
    expect((await rejection(memory.memories.readMemory({ id: randomUUID() }, write))).reason).toBe("insufficient_scope");
    expect((await rejection(memory.memories.readMemory({ id: "not-a-uuid" }, reader(owner)))).reason).toBe("invalid_input");
  });
});
