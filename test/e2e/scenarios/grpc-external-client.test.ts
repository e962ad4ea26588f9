/**
 * The external-client example in docs/grpc.md, run as its own `node` process against real memory
 * and search services: it knows only the .proto files, signs its own credential, and must decode
 * a refusal from grpc-status-details-bin by itself.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../support/core-services.js";
import { REPO_ROOT } from "../../support/processes.js";

const run = promisify(execFile);
let stack: CoreServices;

beforeAll(async () => {
  stack = await startCoreServices({ label: "grpc_example" });
});
afterAll(async () => {
  await stack?.close();
});

describe("docs/examples/grpc-client.mjs", () => {
  it("remembers, reads and finds a memory, then decodes an INVALID_ARGUMENT's reason and field from the Status trailer", async () => {
    const { tenantId } = await stack.createTenant("grpc-example");
    const { stdout } = await run(process.execPath, ["docs/examples/grpc-client.mjs"], {
      cwd: REPO_ROOT,
      // Only what an outside service would have: addresses, its tenant and its own signing key.
      env: {
        PATH: process.env.PATH ?? "",
        MEMORY_ADDRESS: stack.memoryAddress,
        SEARCH_ADDRESS: stack.searchAddress,
        TENANT_ID: tenantId,
        SERVICE_SIGNING_JWK: stack.keys.signingJwk,
        SERVICE_NAME: "docs-example",
      },
      timeout: 30_000,
    });
    const steps = Object.fromEntries(
      stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { step: string; id?: string; ids?: string[] })
        .map((entry) => [entry.step, entry]),
    );
    const id = steps.remember?.id ?? "";
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(steps.remember).toMatchObject({ embedded: "EMBEDDING_STATE_DONE" });
    expect(steps.get).toMatchObject({ ids: [id] });
    expect(steps.search?.ids).toContain(id);
    expect(steps.refused).toMatchObject({
      code: "INVALID_ARGUMENT",
      reason: "invalid_input",
      domain: "3ngram.memory",
      metadata: { field: "memoryType" },
      violations: [expect.objectContaining({ field: "memoryType" })],
    });

    // What the example wrote is really there, for this tenant, as memory itself reports it.
    const memory = await stack.memoryClient();
    const read = await memory.memories.getMemories({ ids: [id] }, { identity: { tenantId, scopes: ["memory:read"] } });
    expect(read.memories.map((m) => m.id)).toEqual([id]);
  });
});
