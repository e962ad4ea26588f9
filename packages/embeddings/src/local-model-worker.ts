// Entry point of one embedding worker thread (see local-model-pool.ts). It loads the bundled
// model once, says so, then answers batches of prepared texts one at a time, in order.
import { parentPort, workerData } from "node:worker_threads";

import { bundledModel } from "./bundled-models.js";
import { embedPreparedBatch, loadLocalModel } from "./local-model.js";
import type { PoolReply, PoolRequest, PoolWorkerData } from "./local-model-pool.js";

const port = parentPort;
if (port === null) throw new Error("local-model-worker must run as a worker thread");
const reply = (message: PoolReply) => port.postMessage(message);

try {
  const choice = workerData as PoolWorkerData;
  const { dimensions } = bundledModel(choice.model);
  const model = await loadLocalModel(choice);
  // The first inference compiles the backend's kernels; pay for it before taking real work.
  await embedPreparedBatch(model, [" "], dimensions);
  port.on("message", (request: PoolRequest) => {
    // Handled between batches, never inside an inference (see stopWorker in the pool).
    if (request.kind === "stop") process.exit(0);
    embedPreparedBatch(model, request.texts, dimensions).then(
      (vectors) => reply({ kind: "vectors", batch: request.batch, vectors }),
      (err: unknown) => reply({ kind: "failed", batch: request.batch, message: (err as Error).message }),
    );
  });
  reply({ kind: "ready" });
} catch (err) {
  reply({ kind: "load-failed", message: (err as Error).message });
}
