import { describe, expect, it } from "vitest";

import { releaseBuffers } from "../src/release-buffers.js";

describe("releaseBuffers", () => {
  it("detaches buffers that own their memory, so it is freed without a garbage collection", () => {
    const file = Buffer.alloc(1 << 20, 7);
    const encoded = new Uint8Array(4096);
    releaseBuffers([file, encoded]);
    expect(file.buffer.byteLength).toBe(0);
    expect(encoded.byteLength).toBe(0);
  });

  it("leaves views into a larger buffer alone: the rest of it may still be in use", () => {
    const whole = new Uint8Array(64).fill(3);
    const view = whole.subarray(8, 16);
    const pooled = Buffer.from("a small buffer from Node's shared pool");
    releaseBuffers([view, pooled]);
    expect(whole.byteLength).toBe(64);
    expect(view.byteLength).toBe(8);
    expect(pooled.toString()).toBe("a small buffer from Node's shared pool");
  });
});
