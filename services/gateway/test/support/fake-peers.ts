/**
 * Stand-ins for the memory and search services: real gRPC servers (the shared RpcServer, so
 * credentials, reason trailers and health behave exactly as in production) with tiny in-memory
 * handlers. They let the gateway be tested end to end before, and independently of, the real
 * services; test/integration/ covers the real ones.
 */
import { randomUUID } from "node:crypto";
import { AppError } from "@3ngram/errors";
import { GetMemoriesResponseSchema, MemoryService, RememberResponseSchema, ResolveApiKeyResponseSchema, StoreEmbeddingResponseSchema, type Memory } from "@3ngram/proto/memory/v1";
import { SearchResponseSchema, SearchService } from "@3ngram/proto/search/v1";
import { create } from "@bufbuild/protobuf";
import { CredentialVerifier, RpcServer, SCOPES, generateServiceKeyPair, type CallContext, type CallerIdentity } from "@3ngram/rpc";
import { createLogger } from "@3ngram/runtime";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceKeyPair } from "@3ngram/rpc";

export const TENANT_A = "00000000-0000-4000-8000-00000000000a";
export const TENANT_B = "00000000-0000-4000-8000-00000000000b";

/** API keys the fake memory service knows. */
export const KEYS = {
  readWrite: "3ng_test_rw_key",
  readOnly: "3ng_test_ro_key",
  writeOnly: "3ng_test_wo_key",
  otherTenant: "3ng_test_b_key",
} as const;

const KEY_TABLE: Record<string, { tenantId: string; userId: string; scopes: string[] }> = {
  [KEYS.readWrite]: { tenantId: TENANT_A, userId: "user-a", scopes: [SCOPES.read, SCOPES.write] },
  [KEYS.readOnly]: { tenantId: TENANT_A, userId: "user-a-ro", scopes: [SCOPES.read] },
  [KEYS.writeOnly]: { tenantId: TENANT_A, userId: "user-a-wo", scopes: [SCOPES.write] },
  [KEYS.otherTenant]: { tenantId: TENANT_B, userId: "user-b", scopes: [SCOPES.read, SCOPES.write, SCOPES.internalAuth] },
};

interface StoredMemory {
  tenantId: string;
  memory: Memory | Omit<Memory, "$typeName">;
}

export interface FakePeers {
  memoryAddr: string;
  searchAddr: string;
  /** Private JWK the gateway signs with (the fakes trust its public half). */
  signingJwk: ServiceKeyPair["privateJwk"];
  /** Every call the fakes received, with the verified caller. */
  calls: { rpc: string; caller: CallerIdentity; request: unknown }[];
  /** Make the next calls of `rpc` fail with this error (cleared by reset()). */
  failWith: Map<string, AppError>;
  /** How many times ResolveApiKey ran. */
  resolveCount(): number;
  reset(): void;
  setServing(serving: { memory: boolean; search: boolean }): void;
  close(): Promise<void>;
}

export async function startFakePeers(): Promise<FakePeers> {
  const { privateJwk, publicJwk } = await generateServiceKeyPair("gateway-test");
  const log = createLogger({ service: "fake-peer", level: process.env.FAKE_LOG ?? "silent" });
  const store = new Map<string, StoredMemory>();
  const calls: FakePeers["calls"] = [];
  const failWith = new Map<string, AppError>();
  let resolves = 0;

  const record = (rpc: string, ctx: CallContext, request: unknown) => {
    calls.push({ rpc, caller: { tenantId: ctx.caller.tenantId, userId: ctx.caller.userId, scopes: ctx.caller.scopes }, request });
    const failure = failWith.get(rpc);
    if (failure) throw failure;
  };

  const memoryServer = new RpcServer({ name: "memory", verifier: new CredentialVerifier("memory", [publicJwk]), log });
  memoryServer.addService(
    MemoryService,
    {
      async remember(req, ctx) {
        record("remember", ctx, req);
        const now = new Date();
        const memory = {
          id: randomUUID(),
          memoryType: req.memoryType,
          topic: req.topic,
          content: req.content,
          contentLength: req.content.length,
          truncated: false,
          scope: req.scope || "personal",
          ...(req.project !== undefined ? { project: req.project } : {}),
          tags: req.tags,
          status: "active",
          validFrom: timestampFromDate(now),
          recordedAt: timestampFromDate(now),
          embeddingState: "done",
        };
        store.set(memory.id, { tenantId: ctx.tenantId, memory });
        return create(RememberResponseSchema, { memory, embedded: "done" });
      },
      async getMemories(req, ctx) {
        record("getMemories", ctx, req);
        const memories = [];
        const notFound = [];
        for (const id of req.ids) {
          const hit = store.get(id);
          if (!hit || hit.tenantId !== ctx.tenantId) notFound.push(id);
          else {
            const bound = req.maxContentChars || 10_000;
            const content = hit.memory.content.slice(0, bound);
            memories.push({ ...hit.memory, content, truncated: content.length < hit.memory.content.length });
          }
        }
        return create(GetMemoriesResponseSchema, { memories, notFound });
      },
      async storeEmbedding() {
        return create(StoreEmbeddingResponseSchema, { stored: false });
      },
      async resolveApiKey(req, ctx) {
        resolves++;
        record("resolveApiKey", ctx, { apiKey: "<redacted>" });
        const entry = KEY_TABLE[req.apiKey];
        if (!entry) throw new AppError("unauthenticated", "unknown api key");
        return create(ResolveApiKeyResponseSchema, { ...entry, keyId: "key-1" });
      },
    },
    {
      remember: { anyScope: [SCOPES.write], tenant: true },
      getMemories: { anyScope: [SCOPES.read], tenant: true },
      storeEmbedding: { anyScope: [SCOPES.internalEmbed], tenant: true },
      resolveApiKey: { anyScope: [SCOPES.internalAuth], tenant: false },
    },
  );

  const searchServer = new RpcServer({ name: "search", verifier: new CredentialVerifier("search", [publicJwk]), log });
  searchServer.addService(
    SearchService,
    {
      async search(req, ctx) {
        record("search", ctx, req);
        const words = req.query.toLowerCase().split(/\s+/).filter(Boolean);
        const hits = [...store.values()]
          .filter((s) => s.tenantId === ctx.tenantId)
          .filter((s) => req.memoryTypes.length === 0 || req.memoryTypes.includes(s.memory.memoryType))
          .filter((s) => req.projects.length === 0 || (s.memory.project !== undefined && req.projects.includes(s.memory.project)))
          .filter((s) => words.some((w) => `${s.memory.topic} ${s.memory.content}`.toLowerCase().includes(w)))
          .map((s) => ({
            id: s.memory.id,
            memoryType: s.memory.memoryType,
            topic: s.memory.topic,
            excerpt: s.memory.content.slice(0, 600),
            contentLength: s.memory.content.length,
            truncated: s.memory.content.length > 600,
            score: 0.5,
            scope: s.memory.scope,
            ...(s.memory.project !== undefined ? { project: s.memory.project } : {}),
            ...(s.memory.recordedAt ? { recordedAt: s.memory.recordedAt } : {}),
          }));
        const limit = req.limit || 5;
        return create(SearchResponseSchema, {
          hits: hits.slice(0, limit),
          hasMore: hits.length > limit,
          coverage: {
            legs: [
              { leg: "vector", available: true, candidates: hits.length },
              { leg: "fts", available: true, candidates: hits.length },
              { leg: "recency", available: true, candidates: hits.length },
            ],
            poolSize: hits.length,
            abstained: hits.length === 0,
          },
        });
      },
    },
    { search: { anyScope: [SCOPES.read], tenant: true } },
  );

  const memoryPort = await memoryServer.listen("127.0.0.1:0");
  const searchPort = await searchServer.listen("127.0.0.1:0");
  memoryServer.setServing(true);
  searchServer.setServing(true);

  return {
    memoryAddr: `127.0.0.1:${memoryPort}`,
    searchAddr: `127.0.0.1:${searchPort}`,
    signingJwk: privateJwk,
    calls,
    failWith,
    resolveCount: () => resolves,
    reset() {
      calls.length = 0;
      failWith.clear();
    },
    setServing(serving) {
      memoryServer.setServing(serving.memory);
      searchServer.setServing(serving.search);
    },
    async close() {
      await Promise.all([memoryServer.shutdown(100), searchServer.shutdown(100)]);
    },
  };
}
