import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { createRequire } from "node:module";
import { Registry } from "prom-client";
import { SearchService } from "@3ngram/proto/search/v1";
import { AppError } from "@3ngram/errors";
import { createLogger } from "@3ngram/runtime";
import { CredentialSigner, CredentialVerifier, RpcServer, checkHealth, createRpcClient, generateServiceKeyPair, SCOPES, type Handlers } from "../src/index.js";

const require = createRequire(import.meta.url);
const log = createLogger({ service: "rpc-test", level: "silent" });
let server: RpcServer;
let address: string;
let signer: CredentialSigner;
let behaviour: "ok" | "slow" | "app-error" | "crash" = "ok";
let seenTenant: string | undefined;
const registry = new Registry();

// A search service whose handler is controlled by the test: we are testing the transport adapter.
const handlers: Handlers<typeof SearchService> = {
  async search(request, ctx) {
    seenTenant = ctx.tenantId;
    if (behaviour === "slow") await new Promise((r) => setTimeout(r, 500));
    if (behaviour === "app-error") throw new AppError("invalid_input", "limit: too big", { field: "limit" });
    if (behaviour === "crash") throw new Error("SELECT secret FROM somewhere failed");
    return { hits: [{ id: "h1", topic: request.query, score: 0.5 }], hasMore: false };
  },
  async similarPairs() {
    return { pairs: [], scanned: 0, model: "" };
  },
};

beforeAll(async () => {
  const keys = await generateServiceKeyPair();
  signer = await CredentialSigner.fromJwk("gateway", keys.privateJwk);
  server = new RpcServer({ name: "search", verifier: new CredentialVerifier("search", [keys.publicJwk]), log, registry });
  server.addService(SearchService, handlers, {
    search: { anyScope: [SCOPES.read], tenant: true },
    similarPairs: { anyScope: [SCOPES.internalConsolidate], tenant: true },
  });
  const port = await server.listen("127.0.0.1:0");
  address = `127.0.0.1:${port}`;
});
afterAll(async () => {
  await server.shutdown();
});

const identity = { tenantId: "01890a5d-ac96-774b-bcce-b302099a8057", scopes: [SCOPES.read] };

describe("RpcServer and client", () => {
  it("round-trips a typed call carrying the tenant from the credential", async () => {
    behaviour = "ok";
    const client = createRpcClient(SearchService, { address, audience: "search", signer });
    const response = await client.search({ query: "hello" }, { identity });
    expect(response.hits[0]).toMatchObject({ id: "h1", topic: "hello", score: 0.5 });
    expect(seenTenant).toBe(identity.tenantId);
    client.close();
  });

  it("carries the reason code and field across the hop", async () => {
    behaviour = "app-error";
    const client = createRpcClient(SearchService, { address, audience: "search", signer });
    const err = (await client.search({ query: "x" }, { identity }).catch((e: unknown) => e)) as AppError;
    expect(err).toBeInstanceOf(AppError);
    expect(err.reason).toBe("invalid_input");
    expect(err.details.field).toBe("limit");
    expect(err.message).toBe("limit: too big");
    client.close();
  });

  it("hides unexpected server errors behind internal_error", async () => {
    behaviour = "crash";
    const client = createRpcClient(SearchService, { address, audience: "search", signer });
    const err = (await client.search({ query: "x" }, { identity }).catch((e: unknown) => e)) as AppError;
    expect(err.reason).toBe("internal_error");
    expect(err.message).not.toContain("SELECT");
    client.close();
  });

  it("turns a missed deadline into a retryable unavailable error", async () => {
    behaviour = "slow";
    const client = createRpcClient(SearchService, { address, audience: "search", signer });
    const err = (await client.search({ query: "x" }, { identity, deadlineMs: 100 }).catch((e: unknown) => e)) as AppError;
    expect(err.reason).toBe("unavailable");
    expect(err.details.retryable).toBe(true);
    client.close();
  });

  it("reports an unreachable peer as retryable unavailable", async () => {
    const client = createRpcClient(SearchService, { address: "127.0.0.1:1", audience: "search", signer });
    const err = (await client.search({ query: "x" }, { identity, deadlineMs: 1000 }).catch((e: unknown) => e)) as AppError;
    expect(err.reason).toBe("unavailable");
    expect(err.message).toBe("search service unavailable, retry later");
    client.close();
  });

  it("counts calls by method and outcome", async () => {
    const text = await registry.metrics();
    expect(text).toMatch(/threengram_rpc_server_seconds_count\{rpc="search.v1.SearchService\/Search",outcome="ok"\} [1-9]/);
    expect(text).toMatch(/threengram_rpc_server_seconds_count\{rpc="search.v1.SearchService\/Search",outcome="invalid_input"\} [1-9]/);
    expect(text).toMatch(/threengram_rpc_server_seconds_count\{rpc="search.v1.SearchService\/Search",outcome="internal_error"\} [1-9]/);
  });

  it("serves standard health that follows setServing", async () => {
    server.setServing(true);
    expect(await checkHealth(address)).toBe("SERVING");
    expect(await checkHealth(address, "search.v1.SearchService")).toBe("SERVING");
    server.setServing(false);
    expect(await checkHealth(address)).toBe("NOT_SERVING");
    server.setServing(true);
    expect(await checkHealth("127.0.0.1:1", "", 500)).toBe("UNREACHABLE");
  });

  it("answers server reflection with our services and their descriptors", async () => {
    const definition = protoLoader.loadSync(require.resolve("@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto"), {
      keepCase: true,
    });
    const pkg = grpc.loadPackageDefinition(definition) as unknown as {
      grpc: { reflection: { v1: { ServerReflection: grpc.ServiceClientConstructor } } };
    };
    const client = new pkg.grpc.reflection.v1.ServerReflection(address, grpc.credentials.createInsecure());
    const stream = client.ServerReflectionInfo!() as grpc.ClientDuplexStream<object, Record<string, unknown>>;
    const answer = (request: object) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        stream.once("data", resolve);
        stream.once("error", reject);
        stream.write(request);
      });
    const list = await answer({ list_services: "" });
    const names = (list.list_services_response as { service: { name: string }[] }).service.map((s) => s.name);
    expect(names).toContain("search.v1.SearchService");
    const file = await answer({ file_containing_symbol: "search.v1.SearchService" });
    expect((file.file_descriptor_response as { file_descriptor_proto: Buffer[] }).file_descriptor_proto.length).toBeGreaterThan(0);
    stream.end();
    client.close();
  });
});
