/**
 * The folded gRPC seam over real loopback gRPC (docs/adr/0040): a peer from connectPeer sends the
 * public value straight as bytes and reads the answer's bytes straight into the public value;
 * bridgeHandlers' services read the request the same way and validate it in the handler path.
 * The contracts are the test's own, with keys in another order than the proto's, so the order
 * an answer arrives in is the schema's. One service mixes bridged and message handlers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ArchiveService } from "@3ngram/proto/memory/v1";
import { SearchService } from "@3ngram/proto/search/v1";
import { createLogger } from "@3ngram/runtime";
import { Registry } from "prom-client";
import {
  CredentialSigner,
  CredentialVerifier,
  RpcServer,
  SCOPES,
  bridgeHandlers,
  connectPeer,
  createRpcClient,
  generateServiceKeyPair,
  type Contract,
  type Peer,
} from "../src/index.js";

const log = createLogger({ service: "rpc-peer-test", level: "silent" });
const tenantId = "01890a5d-ac96-774b-bcce-b302099a8057";
const reader = { identity: { tenantId, scopes: [SCOPES.read, SCOPES.write] } };

const searchContract = {
  search: {
    // A lenient object: the request's other proto fields are dropped, as the test does not name them.
    request: z.object({
      query: z.string().trim().min(1).max(100),
      limit: z.int().min(1).max(50).default(10),
      memoryTypes: z
        .array(z.enum(["decision", "note"]))
        .min(1)
        .optional(),
      recordedAfter: z.string().optional(),
    }),
    // Keys in another order than SearchResponse's and SearchHit's fields.
    response: z.strictObject({
      count: z.int(),
      appliedScope: z.string().nullable(),
      hits: z.array(z.strictObject({ score: z.number(), id: z.string(), topic: z.string(), project: z.string().nullable(), memoryType: z.string() })),
      hasMore: z.boolean(),
    }),
  },
} satisfies Contract<typeof SearchService>;

const archiveContract = {
  import: {
    request: z.object({ options: z.object({ format: z.string().default("3ngram") }).optional(), ndjson: z.string().max(20).optional() }),
    response: z.strictObject({ created: z.int(), format: z.string(), results: z.array(z.unknown()), skipped: z.int(), failed: z.int() }),
  },
  export: {
    request: z.object({ cursor: z.string().optional() }),
    response: z.strictObject({ cursor: z.string().optional(), record: z.record(z.string(), z.unknown()) }),
  },
} satisfies Contract<typeof ArchiveService>;

const services = { search: SearchService, archive: ArchiveService };
const contracts = { search: searchContract, archive: archiveContract };

const seen = { inputs: [] as unknown[], calls: 0, pieces: [] as string[], exportFinished: false };
let slow = false;

const registry = new Registry();
let server: RpcServer;
let address: string;
let signer: CredentialSigner;
let peer: Peer<typeof services, typeof contracts>;

beforeAll(async () => {
  const keys = await generateServiceKeyPair();
  signer = await CredentialSigner.fromJwk("gateway", keys.privateJwk);
  server = new RpcServer({ name: "search", verifier: new CredentialVerifier("search", [keys.publicJwk]), log, registry });
  server.addService(
    SearchService,
    {
      ...bridgeHandlers(SearchService, searchContract, {
        async search(input, ctx) {
          seen.calls += 1;
          seen.inputs.push(input);
          if (slow) await new Promise((r) => setTimeout(r, 300));
          return {
            hits: [{ id: "h1", memoryType: "note", topic: `${input.query}@${ctx.tenantId}`, score: 0.5, project: null }],
            count: 1,
            hasMore: false,
            appliedScope: null,
          };
        },
      }),
      // A message handler beside the bridged one, on the same service.
      async similarPairs() {
        return { pairs: [], scanned: 3 };
      },
    },
    { search: { anyScope: [SCOPES.read], tenant: true }, similarPairs: { anyScope: [SCOPES.read], tenant: true } },
  );
  server.addService(
    ArchiveService,
    {
      ...bridgeHandlers(ArchiveService, archiveContract, {
        async import(parts) {
          seen.pieces = [];
          let format = "";
          for await (const part of parts) {
            if (part.options) format = part.options.format;
            if (part.ndjson !== undefined) seen.pieces.push(part.ndjson);
          }
          return { format, results: [], created: seen.pieces.length, skipped: 0, failed: 0 };
        },
        async *export(input) {
          try {
            for (let i = 0; i < 1_000; i += 1) yield { record: { n: i, from: input.cursor ?? null, at: "2026-01-31T09:00:00Z" }, cursor: `c${i}` };
          } finally {
            seen.exportFinished = true;
          }
        },
      }),
      async erase() {
        return { dryRun: true, erased: [], alreadyErased: [], notFound: [], factsErased: 0, remaining: 0 };
      },
    },
    {
      import: { anyScope: [SCOPES.write], tenant: true },
      export: { anyScope: [SCOPES.read], tenant: true },
      erase: { anyScope: [SCOPES.erase], tenant: true },
    },
  );
  address = `127.0.0.1:${await server.listen("127.0.0.1:0")}`;
  server.setServing(true);
  peer = connectPeer(services, contracts, { address, audience: "search", signer });
});
afterAll(async () => {
  peer?.close();
  await server?.shutdown();
});

describe("a peer and bridged handlers over real gRPC", () => {
  it("sends the public request, the service reads it validated, and the answer arrives with the schema's keys in order", async () => {
    const answer = await peer.search.search({ query: "  hello ", memoryTypes: ["decision"], recordedAfter: "2026-01-01T00:00:00Z" }, reader);
    // Trimmed and defaulted by the service's schema; the instant as Date.toISOString prints it.
    expect(seen.inputs.at(-1)).toEqual({ query: "hello", limit: 10, memoryTypes: ["decision"], recordedAfter: "2026-01-01T00:00:00.000Z" });
    expect(JSON.stringify(answer)).toBe(
      JSON.stringify({
        count: 1,
        appliedScope: null,
        hits: [{ score: 0.5, id: "h1", topic: `hello@${tenantId}`, project: null, memoryType: "note" }],
        hasMore: false,
      }),
    );
  });

  it("refuses a request its contract refuses as invalid_input naming the field, after the credential check", async () => {
    await expect(peer.search.search({ query: "   " }, reader)).rejects.toMatchObject({ reason: "invalid_input", details: { field: "query" } });
    const stranger = await CredentialSigner.fromJwk("gateway", (await generateServiceKeyPair()).privateJwk);
    const forged = connectPeer(services, contracts, { address, audience: "search", signer: stranger });
    await expect(forged.search.search({ query: "   " }, reader)).rejects.toMatchObject({ reason: "unauthenticated" });
    forged.close();
  });

  it("refuses what a message-level client sends that the contract does not know, naming the field", async () => {
    const raw = createRpcClient(SearchService, { address, audience: "search", signer });
    await expect(raw.search({ query: "x", memoryTypes: [99 as never] }, reader)).rejects.toMatchObject({
      reason: "invalid_input",
      details: { field: "memoryTypes.0" },
    });
    raw.close();
  });

  it("answers a message with no public form like any failure in the handler path, and only to a caller with a credential", async () => {
    const raw = createRpcClient(SearchService, { address, audience: "search", signer });
    // Year 10000: a Timestamp RFC 3339 cannot print.
    const request = { query: "x", recordedAfter: { seconds: 253_402_300_800n } };
    const before = seen.calls;
    await expect(raw.search(request, reader)).rejects.toMatchObject({ reason: "internal_error", message: "internal error" });
    expect(seen.calls).toBe(before);
    const stranger = await CredentialSigner.fromJwk("gateway", (await generateServiceKeyPair()).privateJwk);
    const forged = createRpcClient(SearchService, { address, audience: "search", signer: stranger });
    await expect(forged.search(request, reader)).rejects.toMatchObject({ reason: "unauthenticated" });
    raw.close();
    forged.close();
    expect(await registry.metrics()).toMatch(/threengram_rpc_server_seconds_count\{rpc="search.v1.SearchService\/Search",outcome="internal_error"\} 1/);
  });

  it("fails a public value the message cannot hold at the caller, before anything is sent", async () => {
    const before = seen.calls;
    await expect(peer.search.search({ query: "x", memoryTypes: ["gossip" as "note"] }, reader)).rejects.toThrow(/memoryTypes\.0: "gossip"/);
    expect(() => peer.archive.export({ cursor: 5 as unknown as string }, reader)).toThrow();
    expect(seen.calls).toBe(before);
  });

  it("keeps the deadline and the unavailable it ends in", async () => {
    slow = true;
    try {
      await expect(peer.search.search({ query: "x" }, { ...reader, deadlineMs: 100 })).rejects.toMatchObject({
        reason: "unavailable",
        details: { retryable: true },
      });
    } finally {
      slow = false;
    }
  });

  it("streams to the service, each message read and validated as it arrives", async () => {
    const answer = await peer.archive.import([{ options: {} }, { ndjson: "a\n" }, { ndjson: "b\n" }], reader);
    expect(JSON.stringify(answer)).toBe(JSON.stringify({ created: 2, format: "3ngram", results: [], skipped: 0, failed: 0 }));
    expect(seen.pieces).toEqual(["a\n", "b\n"]);
    await expect(peer.archive.import([{ options: {} }, { ndjson: "x".repeat(21) }, { ndjson: "never read" }], reader)).rejects.toMatchObject({
      reason: "invalid_input",
      details: { field: "ndjson" },
    });
    expect(seen.pieces).toEqual([]);
  });

  it("streams from the service in public shapes, and leaving early stops it", async () => {
    const received: unknown[] = [];
    for await (const message of peer.archive.export({ cursor: "start" }, reader)) {
      received.push(message);
      if (received.length === 3) break;
    }
    expect(received.map((m) => JSON.stringify(m))).toEqual(
      [0, 1, 2].map((n) => JSON.stringify({ cursor: `c${n}`, record: { n, from: "start", at: "2026-01-31T09:00:00Z" } })),
    );
    await expect.poll(() => seen.exportFinished).toBe(true);
  });

  it("answers the channel's health and closes", async () => {
    const own = connectPeer(services, contracts, { address, audience: "search", signer });
    expect(await own.health()).toBe("SERVING");
    own.close();
    await expect(own.search.search({ query: "x" }, reader)).rejects.toThrow(/shut down/);
  });
});
