/**
 * How a client channel behaves around failures: reads (declared NO_SIDE_EFFECTS in the .proto)
 * are retried on UNAVAILABLE within the deadline, writes never are, and the client's health
 * check travels the channel that serves calls, following a peer that goes away and comes back on
 * the same address.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ApiKeysService, MemoriesService, OrientationService, ProposalsService, memoryServices } from "@3ngram/proto/memory/v1";
import { MemoryType } from "@3ngram/proto/common/v1/memory";
import { AppError } from "@3ngram/errors";
import { createLogger } from "@3ngram/runtime";
import {
  CredentialSigner,
  CredentialVerifier,
  RpcServer,
  SCOPES,
  createRpcClients,
  generateServiceKeyPair,
  serviceConfig,
  type Handlers,
  type Policies,
} from "../src/index.js";
import { eventually, freePort } from "../../../test/support/processes.js";

const log = createLogger({ service: "rpc-test", level: "silent" });
const identity = { tenantId: "01890a5d-ac96-774b-bcce-b302099a8057", scopes: [SCOPES.read, SCOPES.write] };
const open: Array<{ close(): unknown }> = [];

afterEach(async () => {
  for (const item of open.splice(0)) await item.close();
});

/** A memory service whose getMemories and remember fail with `unavailable` for their first `failures` calls. */
async function flakyMemory(port: number, failures: number) {
  const keys = await generateServiceKeyPair();
  const calls = { getMemories: 0, remember: 0 };
  const handlers = {
    async getMemories() {
      calls.getMemories += 1;
      if (calls.getMemories <= failures) throw new AppError("unavailable", "database unavailable, retry later");
      return { memories: [], notFound: ["x"] };
    },
    async remember() {
      calls.remember += 1;
      if (calls.remember <= failures) throw new AppError("unavailable", "database unavailable, retry later");
      return {};
    },
  } as unknown as Handlers<typeof MemoriesService>;
  const policy = { anyScope: [SCOPES.read, SCOPES.write], tenant: true };
  const policies = Object.fromEntries(MemoriesService.methods.map((m) => [m.localName, policy])) as unknown as Policies<typeof MemoriesService>;
  const start = async () => {
    const server = new RpcServer({ name: "memory", verifier: new CredentialVerifier("memory", [keys.publicJwk]), log });
    server.addService(MemoriesService, handlers, policies);
    await server.listen(`127.0.0.1:${port}`);
    server.setServing(true);
    return server;
  };
  return { keys, calls, start };
}

describe("client channels", () => {
  it("retries a read on UNAVAILABLE and returns its answer; never retries a write", async () => {
    const port = await freePort();
    const memory = await flakyMemory(port, 1);
    const server = await memory.start();
    open.push({ close: () => server.shutdown() });
    const client = createRpcClients(memoryServices, {
      address: `127.0.0.1:${port}`,
      audience: "memory",
      signer: await CredentialSigner.fromJwk("gateway", memory.keys.privateJwk),
    });
    open.push(client);

    const read = await client.memories.getMemories({ ids: ["x"] }, { identity });
    expect(read.notFound).toEqual(["x"]);
    expect(memory.calls.getMemories).toBe(2);

    await expect(client.memories.remember({ memoryType: MemoryType.NOTE, topic: "t", content: "c" }, { identity })).rejects.toMatchObject({
      reason: "unavailable",
    });
    expect(memory.calls.remember).toBe(1);
  });

  it("declares the retry for every read the contracts of a channel's services mark idempotent, and for no write", () => {
    const config = JSON.parse(serviceConfig(MemoriesService, OrientationService, ApiKeysService, ProposalsService)) as {
      methodConfig: Array<{ name: Array<{ service: string; method: string }> }>;
    };
    const retried = config.methodConfig[0]!.name.map((n) => n.method);
    expect(config.methodConfig[0]!.name).toContainEqual({ service: "memory.v1.ApiKeysService", method: "ResolveApiKey" });
    expect(retried).toContain("GetMemories");
    expect(retried).toContain("Briefing");
    expect(retried).toContain("ResolveApiKey");
    for (const write of ["Remember", "Revise", "Resolve", "Archive", "Import", "AcceptProposal", "StoreEmbedding"]) expect(retried).not.toContain(write);
  });

  it("reports health over the serving channel as the peer goes away and comes back on the same address", async () => {
    const port = await freePort();
    const memory = await flakyMemory(port, 0);
    let server = await memory.start();
    const client = createRpcClients(memoryServices, {
      address: `127.0.0.1:${port}`,
      audience: "memory",
      signer: await CredentialSigner.fromJwk("gateway", memory.keys.privateJwk),
    });
    open.push(client);
    expect(await client.health()).toBe("SERVING");

    server.server.forceShutdown();
    await eventually(async () => expect(await client.health()).toBe("UNREACHABLE"), 10_000, 100);
    await expect(client.memories.getMemories({ ids: ["x"] }, { identity })).rejects.toMatchObject({ reason: "unavailable" });

    server = await memory.start();
    open.push({ close: () => server.shutdown() });
    // Generous liveness bound: the bounded reconnect backoff finds it far sooner.
    await eventually(async () => expect(await client.health()).toBe("SERVING"), 15_000, 100);
    expect((await client.memories.getMemories({ ids: ["x"] }, { identity })).notFound).toEqual(["x"]);
  });
});
