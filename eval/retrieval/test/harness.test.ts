import { describe, expect, it } from "vitest";
import { SEARCH_POLICY } from "@3ngram/search";
import { loadFixture, validateFixture, type Fixture, type FixtureQuery } from "../fixture.js";
import { MINIMUM_FLOORS, checkFloors, fixtureFloors, floorTo4, ratchet, readFloors, type FloorsFile } from "../floors.js";
import { pairedBootstrapSe } from "../fit.js";
import { advisoryAbstention, computeMetrics, describeFailures, firstExpectedRank, supersessionCorrect, type QueryOutcome } from "../metrics.js";
import { FIXTURES, mergePolicy, parseArgs } from "../run.js";

const fixture = loadFixture(new URL("../fixture/", import.meta.url));

const query = (over: Partial<FixtureQuery>): FixtureQuery => ({ id: "q", slice: "retrieval", query: "x", expected: ["m1"], ...over });
const outcome = (q: Partial<FixtureQuery>, ranked: string[], abstained = false): QueryOutcome => ({ query: query(q), ranked, abstained });

describe("golden-set metrics", () => {
  it("ranks the first expected id within the top 5 only", () => {
    expect(firstExpectedRank(outcome({ expected: ["m3", "m9"] }, ["m1", "m3", "m9"]))).toBe(2);
    expect(firstExpectedRank(outcome({}, ["a", "b", "c", "d", "e", "m1"]))).toBeNull();
  });

  it("needs the successor in the top 5 and every predecessor absent or below it", () => {
    const q = { slice: "supersession" as const, expected: ["new"], forbidden: ["old", "older"] };
    expect(supersessionCorrect(outcome(q, ["new", "x", "old"]))).toBe(true);
    expect(supersessionCorrect(outcome(q, ["x", "new"]))).toBe(true);
    expect(supersessionCorrect(outcome(q, ["older", "new"]))).toBe(false);
    expect(supersessionCorrect(outcome(q, ["old", "a", "b", "c", "d", "new"]))).toBe(false);
  });

  it("computes the five metrics and leaves advisory queries out of all of them", () => {
    const metrics = computeMetrics([
      outcome({ id: "r1" }, ["m1"]),
      outcome({ id: "r2" }, ["x", "m1"], true),
      outcome({ id: "s1", slice: "supersession", expected: ["new"], forbidden: ["old"] }, ["old", "new"]),
      outcome({ id: "r3" }, ["x"]),
      outcome({ id: "a1", slice: "abstention", expected: [] }, ["x"], true),
      outcome({ id: "a2", slice: "abstention", expected: [] }, ["x"], false),
      outcome({ id: "a3", slice: "abstention", expected: [], advisory: true }, ["x"], false),
    ]);
    expect(metrics.recallAt5).toBeCloseTo(3 / 4);
    expect(metrics.mrrAt5).toBeCloseTo((1 + 1 / 2 + 1 / 2 + 0) / 4);
    expect(metrics.supersession).toBe(0);
    expect(metrics.abstentionPrecision).toBeCloseTo(1 / 2);
    expect(metrics.answerableAboveTau).toBeCloseTo(3 / 4);
    expect(advisoryAbstention([outcome({ slice: "abstention", expected: [], advisory: true }, [], true)])).toEqual({ abstained: 1, of: 1 });
  });

  it("describes misses with ids and ranks, never query text", () => {
    const lines = describeFailures([outcome({ id: "r7", query: "secret question text" }, ["m2", "m1"])]);
    expect(lines).toEqual(["r7 [retrieval] expected at rank 2; top m2,m1"]);
  });
});

describe("floors", () => {
  const file: FloorsFile = { model: "use-lite-512", floors: { ...MINIMUM_FLOORS, recallAt5: 0.95 } };

  it("fails a metric below its floor and applies the issue's minimums even to a lowered file", () => {
    const measured = { recallAt5: 0.94, mrrAt5: 0.9, supersession: 1, abstentionPrecision: 1, answerableAboveTau: 0.89 };
    const failing = checkFloors(file, measured)
      .filter((c) => !c.ok)
      .map((c) => c.name);
    expect(failing).toEqual(["recallAt5", "answerableAboveTau"]);
    const lowered: FloorsFile = { model: file.model, floors: { ...MINIMUM_FLOORS, answerableAboveTau: 0.5 } };
    expect(checkFloors(lowered, measured).find((c) => c.name === "answerableAboveTau")?.ok).toBe(false);
  });

  it("records only upward, rounding down to four decimals", () => {
    const up = { recallAt5: 0.96789, mrrAt5: 0.9, supersession: 1, abstentionPrecision: 1, answerableAboveTau: 0.95 };
    const result = ratchet(file, "use-lite-512", up);
    expect("next" in result && result.next.floors.recallAt5).toBe(0.9678);
    expect(ratchet(file, "use-lite-512", { ...up, recallAt5: 0.9 })).toEqual({ refused: [expect.stringContaining("recall@5")] });
    expect(ratchet(file, "another-model", up)).toEqual({ refused: [expect.stringContaining("another-model")] });
    expect(floorTo4(0.94999999)).toBe(0.9499);
  });

  it("measures an advisory metric without gating it, and never records it", () => {
    const advisory: FloorsFile = { ...file, advisory: ["abstentionPrecision"] };
    const measured = { recallAt5: 0.96, mrrAt5: 0.9, supersession: 1, abstentionPrecision: 0.5, answerableAboveTau: 0.95 };
    const check = checkFloors(advisory, measured).find((c) => c.name === "abstentionPrecision")!;
    expect(check).toMatchObject({ ok: true, advisory: true, value: 0.5 });
    expect(checkFloors(file, measured).find((c) => c.name === "abstentionPrecision")?.ok).toBe(false);
    const result = ratchet(advisory, "use-lite-512", measured);
    expect("next" in result && result.next).toMatchObject({ advisory: ["abstentionPrecision"], floors: { abstentionPrecision: 1, recallAt5: 0.96 } });
  });

  it("reads one set of floors per fixture from the committed file", () => {
    const committed = readFloors(new URL("../floors.json", import.meta.url));
    expect(Object.keys(committed.fixtures).sort()).toEqual(FIXTURES.map((f) => f.name).sort());
    expect(fixtureFloors(committed, "golden").advisory).toBeUndefined();
    // A fixture not in the file has the minimums.
    expect(fixtureFloors(committed, "unknown").floors).toEqual(MINIMUM_FLOORS);
  });
});

describe("fixture rules", () => {
  const clone = (): Fixture => structuredClone(fixture);

  it("accepts the committed fixtures", () => {
    expect(validateFixture(fixture)).toEqual([]);
    // The second fixture loads (loadFixture throws on any rule it breaks), with three-link chains.
    const conversational = loadFixture(new URL("../fixture-conversational/", import.meta.url));
    const revises = new Map(conversational.memories.flatMap((m) => (m.revises ? [[m.id, m.revises] as const] : [])));
    const longest = Math.max(
      ...conversational.memories.map((m) => {
        let n = 1;
        for (let at = revises.get(m.id); at; at = revises.get(at)) n++;
        return n;
      }),
    );
    expect(longest).toBe(3);
  });

  it("refuses an abstention query whose absent term is stored", () => {
    const broken = clone();
    broken.queries.find((q) => q.slice === "abstention")!.absentTerms!.push("kafka");
    expect(validateFixture(broken).join("\n")).toMatch(/absent term appears in m\d+/);
  });

  it("refuses a supersession query that does not forbid exactly the head's predecessors", () => {
    const broken = clone();
    const q = broken.queries.find((x) => x.id === "s009")!;
    q.forbidden = [q.forbidden![0]!];
    expect(validateFixture(broken)).toContain("s009: forbidden must list the head's predecessors");
  });

  it("refuses an answerable query that expects a revised memory, and a memory revised twice", () => {
    const broken = clone();
    broken.queries.push({ id: "r999", slice: "retrieval", query: "x", expected: ["m011"] });
    broken.memories.push({ ...broken.memories.find((m) => m.id === "m142")!, id: "m999", revises: "m012" });
    const problems = validateFixture(broken);
    expect(problems).toContain("r999: expects m011, which has been revised");
    expect(problems).toContain("m012: revised twice");
  });
});

describe("command line", () => {
  it("merges a trial policy over the committed one and refuses unknown keys", () => {
    const trial = mergePolicy(SEARCH_POLICY, { weights: { fts: 0.4 } });
    expect(trial.weights).toEqual({ ...SEARCH_POLICY.weights, fts: 0.4 });
    expect(trial.abstention).toEqual(SEARCH_POLICY.abstention);
    expect(() => mergePolicy(SEARCH_POLICY, { weights: { ftz: 1 } })).toThrow(/unknown key weights\.ftz/);
  });

  it("refuses to record a trial policy and unknown arguments", () => {
    expect(parseArgs(["--record", "--policy", "{}"])).toMatch(/--record measures the committed policy only/);
    expect(parseArgs(["--bogus"])).toMatch(/unknown argument: --bogus/);
    expect(parseArgs(["--evidence"])).toEqual({ record: false, evidence: true, policy: null, fit: false });
    expect(parseArgs(["--fit", "--record"])).toMatch(/--fit stands alone/);
  });
});

describe("the fit's noise estimate", () => {
  it("is zero when every query moves by the same amount, and grows with the spread of the differences", () => {
    const a = [0, 0.5, 1, 0.75, 0.6, 1, 0];
    expect(pairedBootstrapSe(a, a)).toBe(0);
    expect(
      pairedBootstrapSe(
        a,
        a.map((x) => x + 0.1),
      ),
    ).toBeCloseTo(0, 12);
    const small = pairedBootstrapSe(
      a,
      a.map((x, i) => x + (i % 2 === 0 ? 0.1 : -0.1)),
    );
    const large = pairedBootstrapSe(
      a,
      a.map((x, i) => x + (i % 2 === 0 ? 0.5 : -0.5)),
    );
    expect(small).toBeGreaterThan(0);
    expect(large).toBeCloseTo(5 * small, 6);
    // Seeded: the same figures on every run.
    expect(
      pairedBootstrapSe(
        a,
        a.map((x, i) => x + (i % 2 === 0 ? 0.1 : -0.1)),
      ),
    ).toBe(small);
  });
});
