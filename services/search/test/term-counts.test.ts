import { describe, expect, it } from "vitest";
import type { Eligibility } from "../src/db/eligibility.js";
import { TermCountCache } from "../src/in-process/term-counts.js";

const EPOCH = "1970-01-01T00:00:00.000Z";

const base: Eligibility = {
  tenantId: "01a22ab2-0000-7000-8000-000000000001",
  memoryTypes: [],
  scopeNames: null,
  projects: [],
  status: "active",
  recordedAfter: null,
  recordedBefore: null,
  asOf: null,
};

describe("TermCountCache", () => {
  it("keeps positive counts and never a zero, so a new word is always counted afresh", () => {
    const cache = new TermCountCache({ maxEntries: 10, ttlMs: 60_000 });
    cache.remember(base, 201, ["kestrel", "zephyr"], [12, 0]);
    expect(cache.lookup(base, 201, ["kestrel", "zephyr", "owl"])).toEqual([12, undefined, undefined]);
  });

  it("keys counts by tenant, every filter and the cap", () => {
    const cache = new TermCountCache({ maxEntries: 10, ttlMs: 60_000 });
    cache.remember(base, 201, ["kestrel"], [12]);
    const others: Eligibility[] = [
      { ...base, tenantId: "01a22ab2-0000-7000-8000-000000000002" },
      { ...base, memoryTypes: ["decision"] },
      { ...base, scopeNames: ["work"] },
      { ...base, projects: ["atlas"] },
      { ...base, status: null },
      { ...base, recordedAfter: EPOCH },
      { ...base, recordedBefore: EPOCH },
      { ...base, asOf: { validAt: EPOCH } },
      { ...base, asOf: { asKnownAt: EPOCH } },
    ];
    for (const other of others) expect(cache.lookup(other, 201, ["kestrel"])).toEqual([undefined]);
    expect(cache.lookup(base, 4, ["kestrel"])).toEqual([undefined]);
    expect(cache.lookup({ ...base }, 201, ["kestrel"])).toEqual([12]);
  });

  it("forgets a count after its time to live", () => {
    let now = 1_000;
    const cache = new TermCountCache({ maxEntries: 10, ttlMs: 60_000, now: () => now });
    cache.remember(base, 201, ["kestrel"], [12]);
    now += 59_000;
    expect(cache.lookup(base, 201, ["kestrel"])).toEqual([12]);
    now += 2_000;
    expect(cache.lookup(base, 201, ["kestrel"])).toEqual([undefined]);
  });

  it("holds at most maxEntries counts, dropping the least recently used", () => {
    const cache = new TermCountCache({ maxEntries: 2, ttlMs: 60_000 });
    cache.remember(base, 201, ["a", "b"], [1, 2]);
    cache.lookup(base, 201, ["a"]);
    cache.remember(base, 201, ["c"], [3]);
    expect(cache.lookup(base, 201, ["a", "b", "c"])).toEqual([1, undefined, 3]);
  });

  it("size 0 turns it off", () => {
    const cache = new TermCountCache({ maxEntries: 0, ttlMs: 60_000 });
    cache.remember(base, 201, ["kestrel"], [12]);
    expect(cache.lookup(base, 201, ["kestrel"])).toEqual([undefined]);
  });
});
