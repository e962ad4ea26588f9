/**
 * Errors cross gRPC as a google.rpc.Status in grpc-status-details-bin. These tests read the
 * trailer with a plain grpc-js client and the generated google.rpc messages (as any other gRPC
 * client would), check that our own client rebuilds the same AppError from it, and that a foreign
 * server's missing, garbled or unfamiliar Status degrades to the status code.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { createRequire } from "node:module";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { anyPack, anyUnpack, durationMs, type Any } from "@bufbuild/protobuf/wkt";
import { BadRequestSchema, ErrorInfoSchema, RetryInfoSchema } from "@3ngram/proto/google/rpc/error_details";
import { StatusSchema, type Status } from "@3ngram/proto/google/rpc/status";
import { SearchRequestSchema, SearchService } from "@3ngram/proto/search/v1";
import { AppError } from "@3ngram/errors";
import { createLogger } from "@3ngram/runtime";
import { CredentialSigner, CredentialVerifier, RpcServer, SCOPES, createRpcClient, generateServiceKeyPair, grpcServiceDefinition } from "../src/index.js";

const require = createRequire(import.meta.url);
const log = createLogger({ service: "rpc-test", level: "silent" });
const identity = { tenantId: "01890a5d-ac96-774b-bcce-b302099a8057", scopes: [SCOPES.read] };
const TRAILER = "grpc-status-details-bin";

/** What the test search service throws next. */
let next: AppError = new AppError("internal_error", "unset");
let server: RpcServer;
let address: string;
let signer: CredentialSigner;

beforeAll(async () => {
  const keys = await generateServiceKeyPair();
  signer = await CredentialSigner.fromJwk("gateway", keys.privateJwk);
  server = new RpcServer({ name: "search", verifier: new CredentialVerifier("search", [keys.publicJwk]), log });
  server.addService(
    SearchService,
    {
      async search() {
        throw next;
      },
      async similarPairs() {
        throw next;
      },
    },
    { search: { anyScope: [SCOPES.read], tenant: true }, similarPairs: { anyScope: [SCOPES.read], tenant: true } },
  );
  address = `127.0.0.1:${await server.listen("127.0.0.1:0")}`;
});
afterAll(async () => {
  await server.shutdown();
});

/** One call through a bare grpc-js client (no service config, so no retries): the raw error. */
async function rawCall(target: string): Promise<grpc.ServiceError> {
  const Ctor = grpc.makeGenericClientConstructor(grpcServiceDefinition(SearchService), "SearchService");
  const client = new Ctor(target, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${await signer.sign(identity, "search")}`);
  type Unary = (request: unknown, metadata: grpc.Metadata, options: grpc.CallOptions, callback: (err: grpc.ServiceError | null) => void) => void;
  const search = (client as unknown as Record<string, Unary>)["search"]!.bind(client);
  try {
    return await new Promise<grpc.ServiceError>((resolve, reject) => {
      search(create(SearchRequestSchema, { query: "x" }), metadata, { deadline: Date.now() + 5_000 }, (err: grpc.ServiceError | null) =>
        err ? resolve(err) : reject(new Error("call succeeded")),
      );
    });
  } finally {
    client.close();
  }
}

function statusOf(err: grpc.ServiceError): Status {
  const raw = err.metadata.get(TRAILER)[0];
  expect(raw).toBeInstanceOf(Buffer);
  return fromBinary(StatusSchema, raw as Buffer);
}

const unpack = {
  errorInfo: (s: Status) => s.details.map((d) => anyUnpack(d, ErrorInfoSchema)).find(Boolean),
  badRequest: (s: Status) => s.details.map((d) => anyUnpack(d, BadRequestSchema)).find(Boolean),
  retryInfo: (s: Status) => s.details.map((d) => anyUnpack(d, RetryInfoSchema)).find(Boolean),
};

async function viaClient(target: string): Promise<AppError> {
  const client = createRpcClient(SearchService, { address: target, audience: "search", signer, defaultDeadlineMs: 5_000 });
  try {
    return (await client.search({ query: "x" }, { identity }).catch((e: unknown) => e)) as AppError;
  } finally {
    client.close();
  }
}

describe("errors as google.rpc.Status", () => {
  it("sends INVALID_ARGUMENT with an ErrorInfo naming reason, domain and field, and a BadRequest field violation", async () => {
    next = new AppError("invalid_input", "limit: must be at most 100", { field: "limit" });
    const err = await rawCall(address);
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    const status = statusOf(err);
    expect(status).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, message: "limit: must be at most 100" });
    expect(unpack.errorInfo(status)).toMatchObject({ reason: "invalid_input", domain: "3ngram.search", metadata: { field: "limit" } });
    expect(unpack.badRequest(status)?.fieldViolations).toEqual([expect.objectContaining({ field: "limit", description: "must be at most 100" })]);
    expect(unpack.retryInfo(status)).toBeUndefined();
    // The legacy bespoke trailers are gone: one convention.
    expect(Object.keys(err.metadata.getMap()).filter((k) => k.startsWith("x-"))).toEqual([]);

    const appError = await viaClient(address);
    expect(appError).toBeInstanceOf(AppError);
    expect(appError).toMatchObject({ reason: "invalid_input", message: "limit: must be at most 100", details: { field: "limit", retryable: false } });
  });

  it("carries ids as ErrorInfo metadata and rebuilds them, with no BadRequest outside INVALID_ARGUMENT", async () => {
    next = new AppError("conflict", "to: memory m1 already has a successor (m2)", { field: "to", ids: { successor: "m2", memory: "m1" } });
    const status = statusOf(await rawCall(address));
    expect(status.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(unpack.errorInfo(status)?.metadata).toEqual({ field: "to", successorId: "m2", memoryId: "m1" });
    expect(unpack.badRequest(status)).toBeUndefined();

    const appError = await viaClient(address);
    expect(appError).toMatchObject({ reason: "conflict", details: { field: "to", ids: { successor: "m2", memory: "m1" } } });
  });

  it("sends UNAVAILABLE with a RetryInfo: the error's own delay when it states one, else one second", async () => {
    next = new AppError("unavailable", "database unavailable, retry later", { retryable: true });
    const plain = statusOf(await rawCall(address));
    expect(plain.code).toBe(grpc.status.UNAVAILABLE);
    expect(unpack.errorInfo(plain)).toMatchObject({ reason: "unavailable", domain: "3ngram.search" });
    expect(durationMs(unpack.retryInfo(plain)!.retryDelay!)).toBe(1_000);

    next = new AppError("rate_limited", "slow down", { retryAfterMs: 2_500 });
    const limited = statusOf(await rawCall(address));
    expect(limited.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(durationMs(unpack.retryInfo(limited)!.retryDelay!)).toBe(2_500);

    const appError = await viaClient(address);
    expect(appError).toMatchObject({ reason: "rate_limited", message: "slow down", details: { retryable: true, retryAfterMs: 2_500 } });
  });

  it("answers reflection for the google.rpc messages, so a reflecting client can decode the details", async () => {
    const definition = protoLoader.loadSync(require.resolve("@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto"), { keepCase: true });
    const pkg = grpc.loadPackageDefinition(definition) as unknown as {
      grpc: { reflection: { v1: { ServerReflection: grpc.ServiceClientConstructor } } };
    };
    const client = new pkg.grpc.reflection.v1.ServerReflection(address, grpc.credentials.createInsecure());
    const stream = client.ServerReflectionInfo!() as grpc.ClientDuplexStream<object, Record<string, unknown>>;
    const fileFor = (symbol: string) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        stream.once("data", resolve);
        stream.once("error", reject);
        stream.write({ file_containing_symbol: symbol });
      });
    for (const symbol of ["google.rpc.Status", "google.rpc.ErrorInfo", "google.rpc.BadRequest", "google.rpc.RetryInfo"]) {
      const answer = await fileFor(symbol);
      const files = (answer.file_descriptor_response as { file_descriptor_proto: Buffer[] } | undefined)?.file_descriptor_proto ?? [];
      expect(files.length, symbol).toBeGreaterThan(0);
    }
    stream.end();
    client.close();
  });
});

describe("a foreign server's status", () => {
  let foreign: grpc.Server;
  let foreignAddress: string;
  /** What the foreign server answers next: a status code and the raw trailer bytes, if any. */
  let answer: { code: grpc.status; details: string; trailer?: Buffer } = { code: grpc.status.INTERNAL, details: "" };

  beforeAll(async () => {
    foreign = new grpc.Server();
    const refuse: grpc.handleUnaryCall<unknown, unknown> = (_call, callback) => {
      const metadata = new grpc.Metadata();
      if (answer.trailer) metadata.set(TRAILER, answer.trailer);
      callback({ code: answer.code, details: answer.details, metadata });
    };
    foreign.addService(grpcServiceDefinition(SearchService), { search: refuse, similarPairs: refuse });
    const port = await new Promise<number>((resolve, reject) =>
      foreign.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    foreignAddress = `127.0.0.1:${port}`;
  });
  afterAll(() => {
    foreign.forceShutdown();
  });

  const statusBytes = (code: number, details: Any[]) => Buffer.from(toBinary(StatusSchema, create(StatusSchema, { code, message: "theirs", details })));
  const errorInfo = (reason: string, domain: string) => anyPack(ErrorInfoSchema, create(ErrorInfoSchema, { reason, domain, metadata: { field: "limit" } }));

  it.each([
    ["no trailer", undefined],
    ["bytes that are no Status", Buffer.from([0xff, 0xff, 0xff, 0x07, 0x01])],
    ["a Status without ErrorInfo", statusBytes(grpc.status.NOT_FOUND, [])],
    ["an ErrorInfo from another domain", statusBytes(grpc.status.NOT_FOUND, [errorInfo("not_found", "pubsub.googleapis.com")])],
    ["an ErrorInfo with a reason we do not know", statusBytes(grpc.status.NOT_FOUND, [errorInfo("NOT_THERE", "3ngram.search")])],
    ["a Status whose code disagrees with the call's", statusBytes(grpc.status.ALREADY_EXISTS, [errorInfo("duplicate_memory", "3ngram.search")])],
    [
      "an ErrorInfo whose bytes do not parse",
      statusBytes(grpc.status.NOT_FOUND, [
        { $typeName: "google.protobuf.Any", typeUrl: "type.googleapis.com/google.rpc.ErrorInfo", value: new Uint8Array([0x0a, 0x7f]) },
      ]),
    ],
  ])("degrades %s to the reason its status code implies", async (_label, trailer) => {
    answer = { code: grpc.status.NOT_FOUND, details: "their text", ...(trailer ? { trailer } : {}) };
    const err = await viaClient(foreignAddress);
    expect(err).toBeInstanceOf(AppError);
    expect(err.reason).toBe("not_found");
    expect(err.details.field).toBeUndefined();
  });

  it("reads our ErrorInfo next to detail types it does not know", async () => {
    const debugInfo: Any = { $typeName: "google.protobuf.Any", typeUrl: "type.googleapis.com/google.rpc.DebugInfo", value: new Uint8Array([0x12, 0x01, 0x78]) };
    answer = {
      code: grpc.status.INVALID_ARGUMENT,
      details: "theirs",
      trailer: statusBytes(grpc.status.INVALID_ARGUMENT, [debugInfo, errorInfo("invalid_input", "3ngram.search")]),
    };
    const err = await viaClient(foreignAddress);
    expect(err).toMatchObject({ reason: "invalid_input", message: "theirs", details: { field: "limit" } });
  });
});
