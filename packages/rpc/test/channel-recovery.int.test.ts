/**
 * How a client channel behaves around failures: reads (declared NO_SIDE_EFFECTS in the .proto)
 * are retried on UNAVAILABLE within the deadline, also when the replica died after its answer
 * had begun, and on another replica; writes never are; and the client's health check travels the
 * channel that serves calls, following a peer that goes away and comes back on the same address.
 */
import { createServer, connect, type Socket } from "node:net";
import * as grpc from "@grpc/grpc-js";
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
  grpcServiceDefinition,
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

/**
 * A replica that takes calls and then dies: every call waits (after getting the response headers,
 * when `answerBegins`), and `cut()` resets its connections (as the kernel does for a process
 * killed with calls in its socket) and stops it listening. It sits behind a TCP proxy, which is
 * what gets cut.
 */
async function dyingReplica(answerBegins = true) {
  const calls = { getMemories: 0, remember: 0 };
  const server = new grpc.Server();
  const beginAnswer = (name: keyof typeof calls) => (call: grpc.ServerUnaryCall<unknown, unknown>) => {
    calls[name] += 1;
    if (answerBegins) call.sendMetadata(new grpc.Metadata());
  };
  server.addService(grpcServiceDefinition(MemoriesService), { getMemories: beginAnswer("getMemories"), remember: beginAnswer("remember") });
  const backendPort = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
  );
  const sockets: Socket[] = [];
  const proxy = createServer((client) => {
    const backend = connect(backendPort, "127.0.0.1");
    sockets.push(client, backend);
    client.pipe(backend).on("error", () => {});
    backend.pipe(client).on("error", () => {});
    client.on("error", () => {});
  });
  const port = await new Promise<number>((resolve) => proxy.listen(0, "127.0.0.1", () => resolve((proxy.address() as { port: number }).port)));
  return {
    port,
    calls,
    cut() {
      proxy.close();
      for (const socket of sockets) socket.resetAndDestroy();
    },
    close: () => server.forceShutdown(),
  };
}

/** A replica about to die and a healthy one behind one client (round-robin), all closed after the test. */
async function replicaPair<D extends { port: number; close(): unknown }>(dying: D) {
  open.push(dying);
  const port = await freePort();
  const healthy = await flakyMemory(port, 0);
  const server = await healthy.start();
  open.push({ close: () => server.shutdown() });
  const client = createRpcClients(memoryServices, {
    address: `ipv4:127.0.0.1:${dying.port},127.0.0.1:${port}`,
    audience: "memory",
    signer: await CredentialSigner.fromJwk("gateway", healthy.keys.privateJwk),
  });
  open.push(client);
  return { dying, healthy, healthyPort: port, client };
}

describe("client channels", () => {
  it("retries every read in flight on a replica that dies, a burst of them at once, on another replica", async () => {
    const { dying, healthy, client } = await replicaPair(await dyingReplica(false));
    const reads: Array<Promise<{ notFound: string[] }>> = [];
    // More failures at once than gRPC's example throttle (10 tokens) lets the channel retry.
    await eventually(
      () => {
        reads.push(client.memories.getMemories({ ids: ["x"] }, { identity, deadlineMs: 5_000 }));
        expect(dying.calls.getMemories).toBeGreaterThanOrEqual(12);
      },
      10_000,
      5,
    );
    dying.cut();
    for (const read of await Promise.all(reads)) expect(read.notFound).toEqual(["x"]);
    expect(healthy.calls.getMemories).toBe(reads.length);
  });

  it("retries a read on another replica when the one answering it dies after its answer began; not a write", async () => {
    const { dying, healthy, healthyPort, client } = await replicaPair(await dyingReplica());

    // Round-robin over both once both are connected: calls go on until one waits on the dying replica.
    const reads: Array<Promise<{ notFound: string[] }>> = [];
    await eventually(
      () => {
        reads.push(client.memories.getMemories({ ids: ["x"] }, { identity, deadlineMs: 5_000 }));
        expect(dying.calls.getMemories).toBeGreaterThan(0);
      },
      5_000,
      20,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    dying.cut();
    for (const read of await Promise.all(reads)) expect(read.notFound).toEqual(["x"]);
    expect(healthy.calls.getMemories).toBe(reads.length);

    // A write whose answer began may have landed: it fails for its caller to repeat with a key.
    const again = await dyingReplica();
    open.push(again);
    const writer = createRpcClients(memoryServices, {
      address: `ipv4:127.0.0.1:${again.port},127.0.0.1:${healthyPort}`,
      audience: "memory",
      signer: await CredentialSigner.fromJwk("gateway", healthy.keys.privateJwk),
    });
    open.push(writer);
    const writes: Array<Promise<string>> = [];
    await eventually(
      () => {
        writes.push(
          writer.memories.remember({ memoryType: MemoryType.NOTE, topic: "t", content: "c" }, { identity, deadlineMs: 5_000 }).then(
            () => "ok",
            (err: AppError) => err.reason,
          ),
        );
        expect(again.calls.remember).toBeGreaterThan(0);
      },
      5_000,
      20,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    again.cut();
    const outcomes = await Promise.all(writes);
    expect(outcomes.filter((o) => o === "unavailable").length).toBe(again.calls.remember);
    expect(outcomes.filter((o) => o === "unavailable").length).toBeGreaterThan(0);
    expect(again.calls.remember + healthy.calls.remember).toBe(writes.length);
  });

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
