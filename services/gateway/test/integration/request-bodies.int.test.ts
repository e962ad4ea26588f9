/**
 * Request bodies under hostile encodings, against a real gateway over the real memory and search
 * services: a compressed body is bounded by its decoded size while it is decoded (a bomb is
 * refused 413 having cost a limit's worth of decoding, not seconds), and /mcp reads
 * Content-Encoding exactly as REST does. The CPU measured is this whole process's (gateway and
 * services run in it), so the bound is generous; speed itself belongs in benchmarks.
 */
import { randomUUID } from "node:crypto";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCoreServices, type CoreServices } from "../../../../test/support/core-services.js";
import type { RunningGateway } from "../../src/gateway.js";
import { startTestGateway } from "../support/gateway.js";

let core: CoreServices;
let gateway: RunningGateway;
let tenant: { tenantId: string; apiKey: string };

beforeAll(async () => {
  core = await startCoreServices({ label: "request-bodies" });
  gateway = await startTestGateway({ memoryAddr: core.memoryAddress, searchAddr: core.searchAddress, signingJwk: core.keys.signingJwk });
  tenant = await core.createTenant("request bodies");
});
afterAll(async () => {
  await gateway?.close();
  await core?.close();
});

/** 40 MiB of zeros: 67 bytes of brotli, about 40 KiB of gzip. */
const ZEROS = Buffer.alloc(40 << 20);
const BOMBS = { br: brotliCompressSync(ZEROS), gzip: gzipSync(ZEROS) } as const;
const CPU_BOUND_MS = 300;

async function post(path: string, type: string, body: Uint8Array | string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const res = await fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${tenant.apiKey}`, "Content-Type": type, Accept: "application/json, text/event-stream", ...headers },
    body: typeof body === "string" ? body : new Uint8Array(body),
  });
  return { status: res.status, text: await res.text() };
}

/**
 * The answers to three tries, and the least CPU this process spent on one of them. Whatever else
 * the process does meanwhile (collecting an earlier file's garbage, in a worker that runs several
 * files) only ever adds to a try, while decoding a whole bomb would cost seconds on every try.
 */
async function measured<T>(act: () => Promise<T>): Promise<{ answers: T[]; cpuMs: number }> {
  const answers: T[] = [];
  let cpuMs = Infinity;
  for (let i = 0; i < 3; i++) {
    const before = process.cpuUsage();
    answers.push(await act());
    const used = process.cpuUsage(before);
    cpuMs = Math.min(cpuMs, (used.user + used.system) / 1000);
  }
  return { answers, cpuMs };
}

async function stored(marker: string): Promise<number> {
  const { rows } = await core.ownerPool.query<{ n: number }>("SELECT count(*)::int AS n FROM memories WHERE tenant_id = $1 AND content LIKE $2", [
    tenant.tenantId,
    `%${marker}%`,
  ]);
  return rows[0]!.n;
}

describe("a decompression bomb", () => {
  // Warm the paths first, so the measurement below is the bomb's and not a first request's.
  beforeAll(async () => {
    await post("/api/v1/import?format=3ngram", "application/x-ndjson", gzipSync("\n"), { "Content-Encoding": "gzip" });
  });

  it.each(Object.keys(BOMBS) as (keyof typeof BOMBS)[])(
    "to the streamed import (%s) is refused 413 at the limit, for a limit's worth of CPU",
    async (encoding) => {
      const { answers, cpuMs } = await measured(() =>
        post("/api/v1/import?format=3ngram", "application/x-ndjson", BOMBS[encoding], { "Content-Encoding": encoding }),
      );
      for (const answer of answers) {
        expect(answer.status).toBe(413);
        expect(JSON.parse(answer.text)).toMatchObject({ error: "invalid_input", detail: expect.stringMatching(/^request body exceeds \d+ bytes$/) });
      }
      expect(cpuMs).toBeLessThan(CPU_BOUND_MS);
    },
  );

  it("to a REST JSON body, /mcp, the OAuth forms and the UI sign-in form is refused as cheaply", async () => {
    // OAuth answers in RFC 6749's shape (400 invalid_request) and the UI with its own page; the rest say 413.
    const cases: [string, string, number | undefined][] = [
      ["/api/v1/memories", "application/json", 413],
      ["/mcp", "application/json", 413],
      ["/oauth/token", "application/x-www-form-urlencoded", undefined],
      ["/oauth/authorize", "application/x-www-form-urlencoded", undefined],
      ["/ui/sign-in", "application/x-www-form-urlencoded", undefined],
    ];
    for (const [path, type, status] of cases) {
      for (const encoding of Object.keys(BOMBS) as (keyof typeof BOMBS)[]) {
        const { answers, cpuMs } = await measured(() => post(path, type, BOMBS[encoding], { "Content-Encoding": encoding }));
        for (const answer of answers) {
          if (status === undefined) expect([400, 403, 413], `${path} ${encoding}`).toContain(answer.status);
          else expect(answer.status, `${path} ${encoding}`).toBe(status);
        }
        expect(cpuMs, `${path} ${encoding}`).toBeLessThan(CPU_BOUND_MS);
      }
    }
  });

  it("leaves an honest compressed import working", async () => {
    const marker = randomUUID();
    const ndjson = `${JSON.stringify({ kind: "memory", key: `gz-${marker}`, memoryType: "note", topic: "compressed", content: `Compressed import ${marker}.` })}\n`;
    for (const [encoding, encode] of [
      ["gzip", gzipSync],
      ["br", brotliCompressSync],
      ["deflate", deflateSync],
    ] as const) {
      const answer = await post("/api/v1/import?format=3ngram", "application/x-ndjson", encode(ndjson), { "Content-Encoding": encoding });
      expect(answer.status, answer.text).toBe(200);
    }
    expect(await stored(marker)).toBe(1);
  });
});

describe("/mcp Content-Encoding", () => {
  const remember = (marker: string) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "remember", arguments: { memoryType: "note", topic: "encoded", content: `Encoded MCP body ${marker}.` } },
    });

  it("reads gzip, deflate and br bodies as REST does", async () => {
    for (const [encoding, encode] of [
      ["gzip", gzipSync],
      ["deflate", deflateSync],
      ["br", brotliCompressSync],
    ] as const) {
      const marker = randomUUID();
      const answer = await post("/mcp", "application/json", encode(remember(marker)), { "Content-Encoding": encoding, "MCP-Protocol-Version": "2025-06-18" });
      expect(answer.status, `${encoding}: ${answer.text}`).toBe(200);
      expect(answer.text).toContain('"id":7');
      expect(answer.text).not.toContain('"error"');
      expect(await stored(marker), encoding).toBe(1);
    }
  });

  it("refuses any other encoding with 415 and never runs the plain body under it", async () => {
    const marker = randomUUID();
    for (const encoding of ["bogus", "compress", "gzip, br", "zstd"]) {
      const answer = await post("/mcp", "application/json", remember(marker), { "Content-Encoding": encoding, "MCP-Protocol-Version": "2025-06-18" });
      expect(answer.status, encoding).toBe(415);
      expect(JSON.parse(answer.text)).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
    }
    expect(await stored(marker)).toBe(0);
  });

  it("answers a plain body labelled compressed with a parse error, never reading it as plain", async () => {
    const marker = randomUUID();
    for (const encoding of ["gzip", "deflate", "br"]) {
      const answer = await post("/mcp", "application/json", remember(marker), { "Content-Encoding": encoding, "MCP-Protocol-Version": "2025-06-18" });
      expect(answer.status, encoding).toBe(400);
      expect(JSON.parse(answer.text)).toMatchObject({ jsonrpc: "2.0", error: { code: -32700 } });
    }
    expect(await stored(marker)).toBe(0);
  });
});
