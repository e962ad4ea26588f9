import { MessageChannel } from "node:worker_threads";

/**
 * Gives back the memory of buffers nothing will read again, without waiting for a garbage
 * collection. A thread that only runs inferences allocates so little that V8 may never run the full
 * collection that would free the model's load-time copies (the weight files, their ONNX encoding:
 * ~50 MB of resident memory for the life of the process). Transferring a buffer detaches it from
 * this thread; the memory goes with a message that is never delivered and is freed when both ends
 * of its channel close, a moment later.
 *
 * Only buffers that own their whole ArrayBuffer are released: a view into a larger one (Node's
 * small-Buffer pool, say) shares memory that something else may still use.
 */
export function releaseBuffers(views: readonly Uint8Array[]): void {
  const whole = new Set<ArrayBuffer>();
  for (const { buffer, byteOffset, byteLength } of views) {
    if (buffer instanceof ArrayBuffer && byteOffset === 0 && byteLength === buffer.byteLength) whole.add(buffer);
  }
  if (whole.size === 0) return;
  const { port1, port2 } = new MessageChannel();
  try {
    port1.postMessage(null, [...whole]);
  } catch {
    // A buffer Node marked untransferable: it stays for the garbage collector, which is only later.
  } finally {
    port1.close();
    port2.close();
  }
}
