/**
 * The real `malloc_trim`: found wherever the C library is glibc, and giving back the pages of blocks
 * freed among live ones, which glibc's own free() keeps. When it runs is reclaim-on-growth's rule
 * (reclaim-on-growth.test.ts).
 */
import { describe, expect, it } from "vitest";
import { exposedGc } from "../src/heap-compaction.js";
import { runtimeIsGlibc } from "../src/malloc-arenas.js";
import { loadMallocTrim } from "../src/malloc-trim.js";

const MB = 1024 * 1024;

describe("malloc_trim", () => {
  it("is found wherever the C library is glibc", () => {
    expect(loadMallocTrim() !== null).toBe(process.platform === "linux" && runtimeIsGlibc());
  });

  // The test machines run glibc (Debian); elsewhere there is nothing to trim and this fails first.
  it("gives back the pages of blocks freed among live ones", async () => {
    const trim = loadMallocTrim();
    if (trim === null) throw new Error("no malloc_trim: this test needs Linux with glibc");
    await trim();
    // 60 MB in 2 kB blocks (each from an arena, below the 128 kB of a mapping of its own), of
    // which every tenth stays live: glibc can return none of the freed ones' pages by itself.
    let blocks: Buffer[] = [];
    for (let i = 0; i < 30_000; i++) blocks.push(Buffer.allocUnsafeSlow(2048).fill(1));
    blocks = blocks.filter((_, i) => i % 10 === 0);
    // The freed buffers' memory goes back to malloc after V8 collects their objects, from a
    // background thread: collect, and give that thread time.
    exposedGc()();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = process.memoryUsage.rss();
    await trim();
    const after = process.memoryUsage.rss();
    expect(blocks).toHaveLength(3_000);
    expect((before - after) / MB).toBeGreaterThan(30);
  });
});
