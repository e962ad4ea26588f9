/**
 * Client- and server-streaming calls over real loopback gRPC: the same credential check, scope
 * policy, errors (google.rpc.Status) and deadlines as unary calls, backpressure in both
 * directions, and a cancel or a passed deadline stopping the server's work. The handlers are the
 * test's own: this tests the transport, not the archive.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ArchiveService } from "@3ngram/proto/memory/v1";
import { AppError } from "@3ngram/errors";
import { createLogger } from "@3ngram/runtime";
import {
  CredentialSigner,
  CredentialVerifier,
  RpcServer,
  SCOPES,
  createRpcClient,
  generateServiceKeyPair,
  type CallContext,
  type Handlers,
  type RpcClient,
} from "../src/index.js";

const log = createLogger({ service: "rpc-stream-test", level: "silent" });
const tenantId = "01890a5d-ac96-774b-bcce-b302099a8057";
const writer = { identity: { tenantId, scopes: [SCOPES.write] } };
const reader = { identity: { tenantId, scopes: [SCOPES.read] } };

/** What the server-side import handler saw, per test. */
const seen = {
  pieces: [] as string[],
  importCtx: undefined as CallContext | undefined,
};
/** Each export call's own state, by the cursor its test sends (a cancelled call of one test may finish during the next). */
interface ExportCall {
  produced: number;
  ctx: CallContext;
  finished: boolean;
}
const exports = new Map<string, ExportCall>();
let exportMode: "count" | "forever" | "fail-after-3" = "count";
let exportCount = 0;
let importMode: "collect" | "refuse-3rd" | "slow" = "collect";

const handlers: Handlers<typeof ArchiveService> = {
  async import(requests, ctx) {
    seen.importCtx = ctx;
    let n = 0;
    for await (const request of requests) {
      n += 1;
      if (importMode === "refuse-3rd" && n === 3) throw new AppError("invalid_input", "ndjson: the third piece is refused", { field: "ndjson" });
      if (request.part.case === "ndjson") seen.pieces.push(request.part.value);
      if (importMode === "slow") await new Promise((r) => setTimeout(r, 5));
    }
    return { format: ctx.tenantId === tenantId ? "3ngram" : "?", results: [], created: n, skipped: 0, failed: 0 };
  },
  async *export(request, ctx) {
    const call: ExportCall = { produced: 0, ctx, finished: false };
    exports.set(request.cursor ?? "", call);
    try {
      for (let i = 0; exportMode === "forever" || i < exportCount; i += 1) {
        if (exportMode === "fail-after-3" && i === 3) throw new AppError("invalid_input", "cursor: not a cursor", { field: "cursor" });
        call.produced += 1;
        yield { record: { kind: "memory", n: i, cursor: request.cursor ?? null }, ...(i % 500 === 499 ? { cursor: `c${i}` } : {}) };
      }
    } finally {
      call.finished = true;
    }
  },
  async erase() {
    return { dryRun: true, erased: [], alreadyErased: [], notFound: [], factsErased: 0, remaining: 0 };
  },
};

let server: RpcServer;
let client: RpcClient<typeof ArchiveService>;

beforeAll(async () => {
  const keys = await generateServiceKeyPair();
  const signer = await CredentialSigner.fromJwk("gateway", keys.privateJwk);
  server = new RpcServer({ name: "memory", verifier: new CredentialVerifier("memory", [keys.publicJwk]), log });
  server.addService(ArchiveService, handlers, {
    import: { anyScope: [SCOPES.write], tenant: true },
    export: { anyScope: [SCOPES.read], tenant: true },
    erase: { anyScope: [SCOPES.erase], tenant: true },
  });
  const port = await server.listen("127.0.0.1:0");
  client = createRpcClient(ArchiveService, { address: `127.0.0.1:${port}`, audience: "memory", signer });
});
afterAll(async () => {
  client?.close();
  await server?.shutdown();
});

function reset(): void {
  seen.pieces = [];
  seen.importCtx = undefined;
}

const until = async (condition: () => boolean, ms = 5_000, everyMs = 10) => {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, everyMs));
  }
};

function* pieces(n: number) {
  yield { part: { case: "options" as const, value: { format: "3ngram" } } };
  for (let i = 0; i < n; i += 1) yield { part: { case: "ndjson" as const, value: `piece ${i}\n` } };
}

describe("client streaming", () => {
  it("delivers every message in order under the caller's credential and answers once", async () => {
    reset();
    importMode = "collect";
    const answer = await client.import(pieces(2_000), writer);
    expect(answer).toMatchObject({ format: "3ngram", created: 2_001 });
    expect(seen.pieces).toEqual(Array.from({ length: 2_000 }, (_, i) => `piece ${i}\n`));
    expect(seen.importCtx?.tenantId).toBe(tenantId);
  });

  it("reads no faster than the handler takes messages: a slow handler holds the sender back", async () => {
    reset();
    importMode = "slow";
    let sent = 0;
    const piece = "y".repeat(32 * 1024);
    function* counted() {
      yield { part: { case: "options" as const, value: {} } };
      for (let i = 0; i < 300; i += 1) {
        sent += 1;
        yield { part: { case: "ndjson" as const, value: piece } };
      }
    }
    const done = client.import(counted(), writer);
    await until(() => seen.pieces.length >= 20);
    // Flow control bounds what is in flight (windows and a few buffered messages), not the 300 the source holds.
    expect(sent - seen.pieces.length).toBeLessThan(100);
    await done;
    expect(seen.pieces).toHaveLength(300);
  });

  it("refuses mid-stream with the field named, and the sender stops", async () => {
    reset();
    importMode = "refuse-3rd";
    let sent = 0;
    function* endless() {
      yield { part: { case: "options" as const, value: {} } };
      for (;;) {
        sent += 1;
        yield { part: { case: "ndjson" as const, value: "x".repeat(1024) } };
      }
    }
    const err = (await client.import(endless(), writer).catch((e: unknown) => e)) as AppError;
    expect(err).toBeInstanceOf(AppError);
    expect([err.reason, err.details.field, err.message]).toEqual(["invalid_input", "ndjson", "ndjson: the third piece is refused"]);
    expect(sent).toBeLessThan(100_000);
  });

  it("checks the scope before reading a message", async () => {
    reset();
    importMode = "collect";
    const err = (await client.import(pieces(3), reader).catch((e: unknown) => e)) as AppError;
    expect(err.reason).toBe("insufficient_scope");
    expect(seen.importCtx).toBeUndefined();
  });

  it("cancels the call when the sender's source fails, and reports the source's error", async () => {
    reset();
    importMode = "collect";
    async function* broken() {
      yield { part: { case: "options" as const, value: {} } };
      yield { part: { case: "ndjson" as const, value: "one\n" } };
      await until(() => seen.pieces.length === 1);
      throw new Error("the HTTP body broke off");
    }
    await expect(client.import(broken(), writer)).rejects.toThrow("the HTTP body broke off");
    await until(() => seen.importCtx?.signal.aborted === true);
  });
});

describe("server streaming", () => {
  it("streams many messages in order, each as its own message", async () => {
    reset();
    exportMode = "count";
    exportCount = 5_000;
    const got: number[] = [];
    const cursors: string[] = [];
    // 5,000 messages can outlast the default 10 s deadline on a loaded machine; the gateway's export uses 30 min.
    for await (const message of client.export({ cursor: "from" }, { ...reader, deadlineMs: 120_000 })) {
      got.push(message.record!.n as number);
      if (message.cursor !== undefined) cursors.push(message.cursor);
      expect(message.record!.cursor).toBe("from");
    }
    expect(got).toEqual(Array.from({ length: 5_000 }, (_, i) => i));
    expect(cursors).toEqual(["c499", "c999", "c1499", "c1999", "c2499", "c2999", "c3499", "c3999", "c4499", "c4999"]);
    expect(exports.get("from")?.finished).toBe(true);
  });

  it("produces no faster than the client reads", async () => {
    reset();
    exportMode = "forever";
    let read = 0;
    for await (const message of client.export({ cursor: "ahead" }, reader)) {
      void message;
      read += 1;
      if (read === 50) {
        // The reader stops; the server may run ahead only until the flow-control windows are full.
        // Production must come to rest (on a busy machine that takes a while, so it is polled, not
        // timed), well short of what an unbounded producer would reach, and stay there.
        const call = exports.get("ahead")!;
        let settled = -1;
        await until(
          () => {
            const now = call.produced;
            const rested = now === settled;
            settled = now;
            return rested;
          },
          20_000,
          250,
        );
        expect(settled - read).toBeLessThan(5_000);
        await new Promise((r) => setTimeout(r, 300));
        expect(call.produced).toBe(settled);
        break;
      }
    }
  });

  it("stops the server's work when the client leaves the loop (a cancelled export)", async () => {
    reset();
    exportMode = "forever";
    let read = 0;
    for await (const message of client.export({ cursor: "leave" }, reader)) {
      void message;
      if (++read === 3) break;
    }
    await until(() => exports.get("leave")?.finished === true);
    expect(exports.get("leave")?.ctx.signal.aborted).toBe(true);
  });

  it("stops the server's work when the caller's signal aborts", async () => {
    reset();
    exportMode = "forever";
    const abort = new AbortController();
    const err = await (async () => {
      for await (const message of client.export({ cursor: "signal" }, { ...reader, signal: abort.signal })) {
        void message;
        abort.abort();
      }
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    await until(() => exports.get("signal")?.finished === true);
    expect(exports.get("signal")?.ctx.signal.aborted).toBe(true);
  });

  it("ends at the deadline: the caller sees it, the server's signal says so and its work stops", async () => {
    reset();
    exportMode = "forever";
    const err = await (async () => {
      for await (const message of client.export({ cursor: "deadline" }, { ...reader, deadlineMs: 300 })) {
        void message;
        // A slow reader: the deadline passes while the server is held back.
        await new Promise((r) => setTimeout(r, 20));
      }
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect([(err as AppError).reason, (err as AppError).details.retryable]).toEqual(["unavailable", true]);
    await until(() => exports.get("deadline")?.finished === true);
    expect(exports.get("deadline")?.ctx.signal.aborted).toBe(true);
  });

  it("delivers what came before a failure, then the error with its field", async () => {
    reset();
    exportMode = "fail-after-3";
    const got: unknown[] = [];
    const err = await (async () => {
      for await (const message of client.export({ cursor: "fail" }, reader)) got.push(message.record!.n);
    })().catch((e: unknown) => e);
    expect(got).toEqual([0, 1, 2]);
    expect(err).toBeInstanceOf(AppError);
    expect([(err as AppError).reason, (err as AppError).details.field]).toEqual(["invalid_input", "cursor"]);
  });

  it("refuses a caller without the scope before producing anything", async () => {
    reset();
    exportMode = "count";
    exportCount = 3;
    const err = await (async () => {
      for await (const message of client.export({ cursor: "scope" }, writer)) void message;
    })().catch((e: unknown) => e);
    expect((err as AppError).reason).toBe("insufficient_scope");
    expect(exports.has("scope")).toBe(false);
  });
});
