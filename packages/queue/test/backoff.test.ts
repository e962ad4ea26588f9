import { describe, expect, it } from "vitest";
import { backoffDelay } from "../src/options.js";

describe("backoffDelay", () => {
  it("doubles from the base", () => {
    expect([1, 2, 3, 4].map((n) => backoffDelay({ attempts: 5, backoffMs: 2_000 }, n))).toEqual([2_000, 4_000, 8_000, 16_000]);
  });

  it("stops growing at the cap, so retries outlast a restart without waiting hours", () => {
    const policy = { attempts: 10, backoffMs: 2_000, maxBackoffMs: 60_000 };
    expect([1, 5, 6, 9].map((n) => backoffDelay(policy, n))).toEqual([2_000, 32_000, 60_000, 60_000]);
  });
});
