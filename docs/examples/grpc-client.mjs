// An internal service calling memory and search over gRPC directly, as docs/grpc.md describes.
// It uses nothing from this codebase: the .proto files under proto/ (loaded at run time by
// @grpc/proto-loader), @grpc/grpc-js, protobufjs to read error details, and node:crypto to sign
// the service credential.
//
//   MEMORY_ADDRESS=127.0.0.1:50051 SEARCH_ADDRESS=127.0.0.1:50052 TENANT_ID=<uuid> \
//   SERVICE_SIGNING_JWK='{"kty":"OKP","crv":"Ed25519","d":"…","x":"…","kid":"…"}' \
//   node docs/examples/grpc-client.mjs
//
// It prints one JSON line per step: remember, get, search, then a refused call and the error it
// decoded from the grpc-status-details-bin trailer.
import { createPrivateKey, randomUUID, sign } from "node:crypto";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import protobuf from "protobufjs";

const PROTO_DIR = fileURLToPath(new URL("../../proto/", import.meta.url));
const env = (name, fallback) => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};
const memoryAddress = env("MEMORY_ADDRESS", "127.0.0.1:50051");
const searchAddress = env("SEARCH_ADDRESS", "127.0.0.1:50052");
const tenantId = env("TENANT_ID");
const signingJwk = JSON.parse(env("SERVICE_SIGNING_JWK"));
const issuer = env("SERVICE_NAME", "example-service");

// --- The service credential: a JWT signed with Ed25519 (alg EdDSA), one audience per server. ---
const signingKey = createPrivateKey({ key: signingJwk, format: "jwk" });
const base64url = (value) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");

function credential(audience, scopes) {
  const now = Math.floor(Date.now() / 1000);
  const header = { alg: "EdDSA", typ: "JWT", ...(signingJwk.kid ? { kid: signingJwk.kid } : {}) };
  // The servers read the tenant (tid) and scopes only from here, never from the request.
  const claims = { iss: issuer, aud: audience, iat: now, exp: now + 60, tid: tenantId, scope: scopes.join(" "), act: "worker" };
  const signingInput = `${base64url(header)}.${base64url(claims)}`;
  return `${signingInput}.${sign(null, Buffer.from(signingInput), signingKey).toString("base64url")}`;
}

// --- Stubs from the .proto files, with the retry policy the contract declares. ---
const definition = protoLoader.loadSync(["memory/v1/memories_service.proto", "search/v1/search.proto"], {
  includeDirs: [PROTO_DIR],
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
});
const { memory, search } = grpc.loadPackageDefinition(definition);

/** Retries UNAVAILABLE for exactly the methods marked NO_SIDE_EFFECTS or IDEMPOTENT; writes never. */
function serviceConfig(serviceName) {
  const methods = Object.values(definition[serviceName]);
  const safe = methods.filter((m) => ["NO_SIDE_EFFECTS", "IDEMPOTENT"].includes(m.options?.idempotency_level));
  return JSON.stringify({
    methodConfig: [
      {
        name: safe.map((m) => ({ service: serviceName, method: m.originalName })),
        retryPolicy: { maxAttempts: 4, initialBackoff: "0.1s", maxBackoff: "1s", backoffMultiplier: 2, retryableStatusCodes: ["UNAVAILABLE"] },
      },
    ],
  });
}
const channelOptions = (serviceName) => ({ "grpc.service_config": serviceConfig(serviceName) });
// memory serves one service per bounded context (docs/grpc.md); Remember and GetMemories are MemoriesService's.
// A client of several of them would give each stub the same grpc.Channel through the channelOverride option.
const memoryClient = new memory.v1.MemoriesService(memoryAddress, grpc.credentials.createInsecure(), channelOptions("memory.v1.MemoriesService"));
const searchClient = new search.v1.SearchService(searchAddress, grpc.credentials.createInsecure(), channelOptions("search.v1.SearchService"));

/** One unary call with a fresh credential and a deadline (always set one: the server sees it too). */
function call(client, audience, scopes, method, request, deadlineMs = 5_000) {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${credential(audience, scopes)}`);
  return new Promise((resolve, reject) => {
    client[method](request, metadata, { deadline: Date.now() + deadlineMs }, (err, response) => (err ? reject(err) : resolve(response)));
  });
}

// --- The error model: google.rpc.Status in grpc-status-details-bin, details packed in Any. ---
// keepCase: the field names stay as the .proto spells them (field_violations, retry_delay).
const errorTypes = new protobuf.Root().loadSync(
  ["google/rpc/status.proto", "google/rpc/error_details.proto"].map((f) => `${PROTO_DIR}${f}`),
  { keepCase: true },
);
const Status = errorTypes.lookupType("google.rpc.Status");
const detailTypes = ["google.rpc.ErrorInfo", "google.rpc.BadRequest", "google.rpc.RetryInfo"].map((name) => errorTypes.lookupType(name));

function decodeError(err) {
  const out = { code: grpc.status[err.code], message: err.details };
  const raw = err.metadata?.get("grpc-status-details-bin")[0];
  if (!Buffer.isBuffer(raw)) return out;
  const status = Status.decode(raw);
  for (const any of status.details) {
    // type_url is "type.googleapis.com/<full message name>"; skip kinds we do not know.
    const type = detailTypes.find((t) => any.type_url.endsWith(`/${t.fullName.slice(1)}`));
    if (!type) continue;
    const detail = type.toObject(type.decode(any.value), { longs: Number });
    if (type.name === "ErrorInfo") Object.assign(out, { reason: detail.reason, domain: detail.domain, metadata: detail.metadata ?? {} });
    if (type.name === "BadRequest") out.violations = detail.field_violations;
    if (type.name === "RetryInfo") out.retryDelayMs = Number(detail.retry_delay?.seconds ?? 0) * 1000 + Math.round((detail.retry_delay?.nanos ?? 0) / 1e6);
  }
  return out;
}

const print = (step, fields) => console.log(JSON.stringify({ step, ...fields }));

try {
  const topic = `external client ${Date.now()}`;
  const remembered = await call(memoryClient, "memory", ["memory:write"], "Remember", {
    // Enums travel by name with enums: String (or by number): MEMORY_TYPE_NOTE, never "note".
    memory_type: "MEMORY_TYPE_NOTE",
    topic,
    content: "Internal services call memory and search over gRPC with a signed service credential.",
    // A retry of this write with the same key answers with the first write instead of storing twice.
    idempotency_key: randomUUID(),
  });
  print("remember", { id: remembered.memory.id, embedded: remembered.embedded });

  const got = await call(memoryClient, "memory", ["memory:read"], "GetMemories", { ids: [remembered.memory.id] });
  print("get", { ids: got.memories.map((m) => m.id), topics: got.memories.map((m) => m.topic) });

  const found = await call(searchClient, "search", ["memory:read"], "Search", { query: "signed service credential", limit: 5 });
  print("search", { ids: found.hits.map((h) => h.id) });

  try {
    // A number no value of the enum has (a client built from a newer contract, say) is refused by field.
    await call(memoryClient, "memory", ["memory:write"], "Remember", { memory_type: 99, topic, content: "refused" });
    print("refused", { unexpected: "the call succeeded" });
  } catch (err) {
    print("refused", decodeError(err));
  }
} finally {
  memoryClient.close();
  searchClient.close();
}
