import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

import type { EmbedOptions, Embedder } from "./embedder.js";
import { EmbeddingsError } from "./errors.js";
import { bundledModel, type BundledModelSpec } from "./bundled-models.js";
import { checkMaxInputChars, DEFAULT_MAX_INPUT_CHARS } from "./input.js";
import { defaultLocalModelChoice, LOCAL_BATCH_SIZE, modelInput, type LocalModelChoice } from "./local-model.js";

/** What a worker thread is sent: a batch to embed, or the request to stop between batches. */
export type PoolRequest = { kind: "embed"; batch: number; texts: string[] } | { kind: "stop" };

/** What a worker thread is started with: the model it loads. */
export type PoolWorkerData = LocalModelChoice;

/** What a worker thread sends back. */
export type PoolReply =
  | { kind: "ready" }
  | { kind: "load-failed"; message: string }
  | { kind: "vectors"; batch: number; vectors: number[][] }
  | { kind: "failed"; batch: number; message: string };

/** Most worker threads a pool accepts: each holds its own copy of the model (~70 MB resident with two malloc arenas, ~130 MB with glibc's default). */
export const MAX_LOCAL_WORKERS = 16;

/**
 * Worker threads a service process starts when EMBEDDINGS_WORKERS is unset: one per core, at most
 * four (beyond that the memory of extra model copies buys little on the machines we target).
 */
export function defaultServiceWorkers(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}

export interface LocalModelPoolOptions extends Partial<LocalModelChoice> {
  /** Worker threads, each with its own copy of the model. */
  workers: number;
  /** Inputs longer than this are truncated. Default 8000 characters. */
  maxInputChars?: number;
  /** The worker entry point; defaults to the compiled local-model-worker.js. */
  workerUrl?: URL;
}

interface Request {
  vectors: number[][];
  remaining: number;
  settled: boolean;
  resolve(vectors: number[][]): void;
  reject(err: unknown): void;
}

interface Item {
  request: Request;
  index: number;
  text: string;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  exited: boolean;
  /** The batch in flight on this worker, if any; a worker runs one batch at a time. */
  busy: { id: number; items: Item[] } | undefined;
}

/**
 * The compiled worker sits beside this file. Under vitest this module is the TypeScript source,
 * which a worker thread on Node 20 cannot load, so the package's compiled copy is used (build first).
 */
function defaultWorkerUrl(): URL {
  const beside = new URL("./local-model-worker.js", import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  return new URL("../dist/local-model-worker.js", import.meta.url);
}

/**
 * Asks a worker to end itself between batches and waits until it has. Not `terminate()`: ONNX
 * Runtime's inference is one native call, and a thread terminated inside it aborts the whole
 * process when the call returns into the torn-down thread.
 */
function stopWorker(slot: Slot): Promise<void> {
  if (slot.exited) return Promise.resolve();
  const exited = new Promise<void>((resolve) => slot.worker.once("exit", () => resolve()));
  // Referenced until it is gone, or a caller awaiting this could see the process end first.
  slot.worker.ref();
  slot.worker.postMessage({ kind: "stop" } satisfies PoolRequest);
  return exited;
}

function workerStopped(reason: string): EmbeddingsError {
  return new EmbeddingsError(`local embedding worker ${reason}; retry the call`, { provider: "local", retryable: true });
}

/**
 * The bundled model run in a pool of worker threads, so inference never blocks the event loop and
 * uses as many cores as there are workers. Texts from concurrent calls queue together and an idle
 * worker takes up to {@link LOCAL_BATCH_SIZE} of them at once: the model embeds a batch of 16 more
 * than twice as fast per text as 16 single calls, and a lone call still goes out at once.
 *
 * A worker that dies fails only the calls whose texts it held, with a retryable error, and is
 * replaced; the process and every other call carry on.
 */
export class LocalModelPool implements Embedder {
  readonly model: string;
  readonly dimensions: number;
  readonly size: number;
  readonly choice: LocalModelChoice;
  private readonly spec: BundledModelSpec;
  private readonly maxInputChars: number;
  private readonly workerUrl: URL;
  private readonly slots: Slot[] = [];
  private readonly queue: Item[] = [];
  private nextBatch = 0;
  private closed = false;
  /** Settled when every worker of the current generation is ready (or one failed to load). */
  private starting: Promise<void> | undefined;

  constructor(options: LocalModelPoolOptions) {
    if (!Number.isInteger(options.workers) || options.workers < 1 || options.workers > MAX_LOCAL_WORKERS) {
      throw new RangeError(`LocalModelPool: workers must be an integer from 1 to ${MAX_LOCAL_WORKERS}, got ${options.workers}`);
    }
    this.size = options.workers;
    this.maxInputChars = checkMaxInputChars("LocalModelPool", options.maxInputChars ?? DEFAULT_MAX_INPUT_CHARS);
    this.workerUrl = options.workerUrl ?? defaultWorkerUrl();
    const { workers: _workers, maxInputChars: _max, workerUrl: _url, ...choice } = options;
    this.choice = defaultLocalModelChoice(choice);
    this.spec = bundledModel(this.choice.model);
    this.model = this.spec.id;
    this.dimensions = this.spec.dimensions;
  }

  /** Starts every worker and waits until each has loaded the model. */
  async warmup(): Promise<void> {
    await this.start();
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<number[][]> {
    const { signal, purpose = "document" } = options;
    signal?.throwIfAborted();
    if (this.closed) throw new EmbeddingsError("local embedding pool is closed", { provider: "local" });
    if (texts.length === 0) return [];
    const started = this.start();

    const result = new Promise<number[][]>((resolve, reject) => {
      const request: Request = {
        vectors: new Array<number[]>(texts.length),
        remaining: texts.length,
        settled: false,
        resolve: (vectors) => {
          request.settled = true;
          signal?.removeEventListener("abort", onAbort);
          resolve(vectors);
        },
        reject: (err) => {
          request.settled = true;
          signal?.removeEventListener("abort", onAbort);
          reject(err);
        },
      };
      // An aborted call leaves the queue at once; texts already on a worker finish and are dropped.
      const onAbort = () => {
        if (!request.settled) request.reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      // Prepared here, with the purpose's prefix, so queries and documents can share a batch.
      texts.forEach((text, index) => this.queue.push({ request, index, text: modelInput(this.spec, text, purpose, this.maxInputChars) }));
    });
    // Workers already up take the texts now; the rest is handed out as workers come up.
    this.dispatch();
    started.then(
      () => this.dispatch(),
      (err: unknown) => this.failQueued(err),
    );
    return result;
  }

  /** Stops every worker; queued and in-flight calls fail. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.failQueued(new EmbeddingsError("local embedding pool is closed", { provider: "local" }));
    const slots = this.slots.splice(0);
    for (const slot of slots) {
      for (const item of slot.busy?.items ?? []) {
        if (!item.request.settled) item.request.reject(workerStopped("was stopped"));
      }
    }
    await Promise.all(slots.map((slot) => stopWorker(slot)));
  }

  /**
   * Takes one worker thread out as a crash would. For operators and fault tests: the calls it held
   * fail at once with a retryable error, a fresh worker takes its place, and the old thread stops
   * after its current batch (whose answer is dropped). Resolves once it is gone.
   */
  async terminateWorker(index: number): Promise<void> {
    const slot = this.slots[index];
    if (slot === undefined) throw new RangeError(`LocalModelPool: no worker ${index}`);
    // Out of the pool first, so its answer to the batch in flight is dropped.
    this.remove(slot);
    await stopWorker(slot);
    this.lost(slot);
  }

  /** Workers currently running a batch (for metrics and tests). */
  get busyWorkers(): number {
    return this.slots.filter((slot) => slot.busy !== undefined).length;
  }

  private start(): Promise<void> {
    if (this.starting === undefined || this.slots.length < this.size) {
      const pending: Promise<void>[] = [];
      while (this.slots.length < this.size) pending.push(this.spawn());
      const attempt = Promise.all(pending).then(() => undefined);
      this.starting = attempt;
      // A load failure is not remembered: the next call tries again with fresh workers.
      attempt.catch(() => {
        if (this.starting === attempt) this.starting = undefined;
      });
    }
    return this.starting;
  }

  private spawn(): Promise<void> {
    const worker = new Worker(fileURLToPath(this.workerUrl), { workerData: this.choice satisfies PoolWorkerData });
    const slot: Slot = { worker, ready: false, exited: false, busy: undefined };
    this.slots.push(slot);
    worker.unref();
    return new Promise<void>((resolve, reject) => {
      worker.on("message", (reply: PoolReply) => {
        switch (reply.kind) {
          case "ready":
            slot.ready = true;
            resolve();
            this.dispatch();
            return;
          case "load-failed":
            this.remove(slot);
            void worker.terminate();
            reject(new EmbeddingsError(`local embedding model failed to load: ${reply.message}`, { provider: "local" }));
            return;
          case "vectors":
            this.finish(slot, reply.batch, (item, position) => {
              const request = item.request;
              if (request.settled) return;
              request.vectors[item.index] = reply.vectors[position]!;
              request.remaining -= 1;
              if (request.remaining === 0) request.resolve(request.vectors);
            });
            return;
          case "failed": {
            const error = new EmbeddingsError(`local embedding model failed: ${reply.message}`, { provider: "local" });
            this.finish(slot, reply.batch, (item) => {
              if (!item.request.settled) item.request.reject(error);
            });
            return;
          }
        }
      });
      // 'error' (an exception the worker did not catch) is always followed by 'exit'.
      worker.on("error", () => undefined);
      worker.on("exit", () => {
        slot.exited = true;
        // Settles the start of a worker that never became ready, whatever took it out.
        if (!slot.ready) reject(new EmbeddingsError("local embedding worker stopped while loading the model", { provider: "local" }));
        if (!this.remove(slot)) return;
        if (slot.ready) this.lost(slot);
      });
    });
  }

  /** A worker gone and out of the pool: its calls fail, retryably, and a fresh worker is started. */
  private lost(slot: Slot): void {
    for (const item of slot.busy?.items ?? []) {
      if (!item.request.settled) item.request.reject(workerStopped("stopped"));
    }
    if (!this.closed)
      this.start().then(
        () => this.dispatch(),
        (err: unknown) => this.failQueued(err),
      );
  }

  /** Takes a slot out of the pool; false if it was already out (closed, or removed on load failure). */
  private remove(slot: Slot): boolean {
    const at = this.slots.indexOf(slot);
    if (at < 0) return false;
    this.slots.splice(at, 1);
    return true;
  }

  private finish(slot: Slot, batch: number, each: (item: Item, position: number) => void): void {
    // A worker already taken out of the pool answers no one: its calls have failed or will.
    if (!this.slots.includes(slot)) return;
    const busy = slot.busy;
    if (busy === undefined || busy.id !== batch) return;
    slot.busy = undefined;
    slot.worker.unref();
    busy.items.forEach(each);
    this.dispatch();
  }

  /** Hands queued texts to idle workers, up to one batch each. */
  private dispatch(): void {
    for (const slot of this.slots) {
      if (!slot.ready || slot.busy !== undefined) continue;
      const items: Item[] = [];
      while (items.length < LOCAL_BATCH_SIZE && this.queue.length > 0) {
        const item = this.queue.shift()!;
        if (!item.request.settled) items.push(item);
      }
      if (items.length === 0) return;
      const id = this.nextBatch++;
      slot.busy = { id, items };
      // A busy worker keeps the process alive until its answer arrives; an idle one does not.
      slot.worker.ref();
      slot.worker.postMessage({ kind: "embed", batch: id, texts: items.map((item) => item.text) } satisfies PoolRequest);
    }
  }

  private failQueued(err: unknown): void {
    for (const item of this.queue.splice(0)) {
      if (!item.request.settled) item.request.reject(err);
    }
  }
}
