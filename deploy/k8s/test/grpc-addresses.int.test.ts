/**
 * The gRPC side of the manifests against real servers: the `dns:///host:port` address form the
 * ConfigMaps give the gateway and the consolidator works with packages/rpc's clients (which
 * round-robin over every address the name resolves to), and the health service the native
 * readiness probe asks (overall status, service "") answers SERVING on a healthy server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryServices } from "@3ngram/proto/memory/v1";
import { MemoryType } from "@3ngram/proto/common/v1/memory";
import { SearchService } from "@3ngram/proto/search/v1";
import { checkHealth, createRpcClient, createRpcClients, type RpcClient, type RpcClients } from "@3ngram/rpc";
import { reader, writer, type TestTenant } from "../../../test/support/calls.js";
import { startCoreServices, type CoreServices } from "../../../test/support/core-services.js";
import { byName, containerPort, loadRendered, ofKind, onlyContainer, type ConfigMapDoc, type DeploymentDoc } from "./rendered.js";

const docs = loadRendered();
const gatewayConfig = byName(ofKind<ConfigMapDoc>(docs, "ConfigMap"), "gateway-config").data!;
const deployments = ofKind<DeploymentDoc>(docs, "Deployment");

/** The shipped address with only the host and port swapped for this machine's server. */
function localAddress(shipped: string, serverAddress: string): string {
  const port = serverAddress.slice(serverAddress.lastIndexOf(":") + 1);
  const local = shipped.replace(/^(dns:\/\/\/)[^:]+:\d+$/, `$1localhost:${port}`);
  expect(local, shipped).not.toBe(shipped);
  return local;
}

let stack: CoreServices;
let tenant: TestTenant;
let memory: RpcClients<typeof memoryServices>;
let search: RpcClient<typeof SearchService>;
let memoryAddress: string;
let searchAddress: string;

beforeAll(async () => {
  stack = await startCoreServices({ label: "k8s-grpc" });
  tenant = await stack.createTenant("k8s");
  memoryAddress = localAddress(gatewayConfig.MEMORY_ADDR!, stack.memoryAddress);
  searchAddress = localAddress(gatewayConfig.SEARCH_ADDR!, stack.searchAddress);
  memory = createRpcClients(memoryServices, { address: memoryAddress, audience: "memory", signer: await stack.keys.signer("gateway") });
  search = createRpcClient(SearchService, { address: searchAddress, audience: "search", signer: await stack.keys.signer("gateway") });
});

afterAll(async () => {
  memory?.close();
  search?.close();
  await stack?.close();
});

describe("gRPC addresses and health as the manifests use them", () => {
  it("write through memory and find it through search over dns:/// addresses", async () => {
    expect(memoryAddress).toMatch(/^dns:\/\/\/localhost:\d+$/);
    const remembered = await memory.memories.remember(
      { memoryType: MemoryType.NOTE, topic: "kestrel", content: "A kestrel hovered over the ridge." },
      writer(tenant),
    );
    const found = await search.search({ query: "kestrel ridge" }, reader(tenant));
    expect(found.hits.map((hit) => hit.id)).toContain(remembered.memory!.id);
  });

  it("answer the readiness probe's health check (overall status) with SERVING", async () => {
    for (const name of ["memory", "search"]) {
      const probe = onlyContainer(byName(deployments, name)).readinessProbe!;
      // No service name: the kubelet asks for the server's overall status, "".
      expect(probe.grpc?.service ?? "").toBe("");
      expect(probe.grpc?.port).toBe(containerPort(onlyContainer(byName(deployments, name)), "grpc"));
    }
    expect(await checkHealth(memoryAddress, "")).toBe("SERVING");
    expect(await checkHealth(searchAddress, "")).toBe("SERVING");
  });
});
