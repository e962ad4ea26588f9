import { describe, expect, it } from "vitest";
import { Bm25, bm25Tokens } from "../bm25.js";
import { locomoFixture, parseConversation, type LocomoConversation } from "../data.js";
import { floorFailures, ratchetLocomo, type LocomoFloors } from "../floors.js";
import { judge, summarise } from "../metrics.js";
import { bm25Ranked, parseLocomoArgs } from "../run.js";

/** A hand-written conversation in LoCoMo's shape (not LoCoMo's text), with the data's kinds of broken evidence. */
const CONVERSATION = {
  speaker_a: "Ada",
  speaker_b: "Bo",
  session_2_date_time: "9:10 am on 3 June, 2023",
  session_2: [
    { speaker: "Bo", dia_id: "D2:1", text: "We adopted a greyhound called Pepper." },
    { speaker: "Ada", dia_id: "D2:2", text: "Lovely! Send a photo.", blip_caption: "a photo of a dog on a sofa" },
  ],
  session_1_date_time: "1:56 pm on 8 May, 2023",
  session_1: [
    { speaker: "Ada", dia_id: "D1:1", text: "I started pottery classes on Tuesday." },
    { speaker: "Bo", dia_id: "D1:2", text: "Nice. I am training for a half marathon." },
  ],
  // Session summaries and events sit beside the sessions in the real files; they are not turns.
  session_1_summary: "Ada and Bo talk about hobbies.",
  qa: [
    { question: "What class did Ada start?", answer: "pottery", evidence: ["D1:1"], category: 4 },
    { question: "What is Bo's dog called?", answer: "Pepper", evidence: ["D2:1; D2:2"], category: 1 },
    { question: "When did Bo adopt a dog?", answer: "June 2023", evidence: ["D2:1", "D", "D9:9", "D2:1"], category: 2 },
    { question: "What did Ada say about cats?", adversarial_answer: "nothing", evidence: ["D1:1"], category: 5 },
    { question: "Would Bo enjoy a race?", answer: "yes", evidence: [], category: 3 },
  ],
};

describe("LoCoMo conversations", () => {
  const conversation: LocomoConversation = parseConversation("7", CONVERSATION);

  it("stores each turn as an event in the conversation's scope, sessions in order, with speaker and day", () => {
    expect(conversation.scope).toBe("locomo-7");
    expect(conversation.memories.map((m) => m.id)).toEqual(["7/D1:1", "7/D1:2", "7/D2:1", "7/D2:2"]);
    expect(conversation.memories[0]).toEqual({
      id: "7/D1:1",
      type: "event",
      scope: "locomo-7",
      topic: "Ada, 8 May, 2023",
      content: "Ada (8 May, 2023): I started pottery classes on Tuesday.",
    });
    expect(conversation.memories[3]!.content).toBe("Ada (3 June, 2023): Lovely! Send a photo. [shares a photo of a dog on a sofa]");
  });

  it("asks categories 1–4 with evidence, setting malformed and dangling evidence aside", () => {
    expect(conversation.skipped).toEqual({ otherCategory: 1, withoutEvidence: 1 });
    expect(conversation.questions.map((q) => [q.index, q.category, q.evidence, q.malformed, q.dangling])).toEqual([
      [0, 4, ["D1:1"], [], []],
      [1, 1, [], ["D2:1; D2:2"], []],
      [2, 2, ["D2:1"], ["D"], ["D9:9"]],
    ]);
    const fixture = locomoFixture([conversation]);
    expect(fixture.queries.map((q) => [q.id, q.slice, q.expected, q.scope])).toEqual([
      ["7/q0", "retrieval", ["7/D1:1"], "locomo-7"],
      ["7/q1", "retrieval", [], "locomo-7"],
      ["7/q2", "retrieval", ["7/D2:1"], "locomo-7"],
    ]);
  });

  it("refuses a file that is not in LoCoMo's shape, naming the conversation", () => {
    expect(() => parseConversation("9", { qa: [] })).toThrow("LoCoMo conversation 9: no session_N lists");
    expect(() => parseConversation("9", { ...CONVERSATION, session_2_date_time: undefined })).toThrow("session_2_date_time is missing");
  });
});

describe("LoCoMo metrics", () => {
  it("judges the first evidence turn in the top 5 and counts the evidence found there", () => {
    expect(judge(["a", "b", "c"], ["c", "x"])).toEqual({ rank: 3, found: 1, evidence: 2 });
    expect(judge(["a", "b", "c", "d", "e", "f"], ["f"])).toEqual({ rank: null, found: 0, evidence: 1 });
    // Evidence that was all malformed: a miss that adds no evidence turns.
    expect(judge(["a"], [])).toEqual({ rank: null, found: 0, evidence: 0 });
  });

  it("computes hit@5, MRR@5 and pooled evidence recall", () => {
    const metrics = summarise([
      { rank: 1, found: 2, evidence: 2 },
      { rank: 4, found: 1, evidence: 3 },
      { rank: null, found: 0, evidence: 1 },
      { rank: null, found: 0, evidence: 0 },
    ]);
    expect(metrics).toMatchObject({ questions: 4, hits: 2, hitAt5: 0.5 });
    expect(metrics.mrrAt5).toBeCloseTo((1 + 1 / 4) / 4);
    expect(metrics.evidenceRecall).toBeCloseTo(3 / 6);
    expect(summarise([])).toMatchObject({ hitAt5: 0, mrrAt5: 0, evidenceRecall: 0 });
  });
});

describe("BM25 baseline", () => {
  it("reads lower-case word tokens without English stop words", () => {
    // "don", "t", "me", "now", "i", "on", "a" are on the Snowball list; the "m" of "I'm" is not.
    expect(bm25Tokens("Don't STOP me now: I'm on a half-marathon plan, 2023!")).toEqual(["stop", "m", "half", "marathon", "plan", "2023"]);
  });

  it("scores with k1 1.2, b 0.75 and a floored idf, ties in document order", () => {
    const bm25 = new Bm25(["red apple", "green apple pie", "blue sky", "apple"]);
    // apple is in 3 of 4 documents: its idf ln(1.5 / 3.5) is negative, so it gets 0.25 × the mean
    // idf of the six terms (apple and five terms in one document each, idf ln(3.5 / 1.5)).
    const rare = Math.log(3.5 / 1.5);
    const floor = (0.25 * (Math.log(1.5 / 3.5) + 5 * rare)) / 6;
    const averageLength = (2 + 3 + 2 + 1) / 4;
    const once = (length: number) => 2.2 / (1 + 1.2 * (0.25 + (0.75 * length) / averageLength));
    const scores = bm25.scores("red apple");
    expect(scores[0]).toBeCloseTo(rare * once(2) + floor * once(2), 12);
    expect(scores[1]).toBeCloseTo(floor * once(3), 12);
    expect(scores[2]).toBe(0);
    expect(scores[3]).toBeCloseTo(floor * once(1), 12);
    // Shorter documents first; equal scores (and no match at all) in document order.
    expect(bm25.top("apple", 3)).toEqual([3, 0, 1]);
    expect(bm25.top("blue red", 3)).toEqual([0, 2, 1]);
  });

  it("ranks each conversation's turns by their topic and content", () => {
    const conversation = parseConversation("7", CONVERSATION);
    const [pottery, dog] = bm25Ranked([conversation]);
    expect(pottery![0]).toBe("7/D1:1");
    expect(dog![0]).toBe("7/D2:1");
  });
});

describe("LoCoMo floors", () => {
  const file: LocomoFloors = { model: "bge-small-en-v1.5-int8", floors: { hitAt5: 0.7, mrrAt5: 0.5, evidenceRecall: 0.5 } };

  it("fails below a floor (less three questions' worth, for another CPU's int8 kernels), and any run with another model", () => {
    expect(floorFailures(file, file.model, { hitAt5: 0.7, mrrAt5: 0.5, evidenceRecall: 0.5 })).toEqual([]);
    expect(floorFailures(file, file.model, { hitAt5: 0.697, mrrAt5: 0.5, evidenceRecall: 0.4965 })).toEqual([]);
    expect(floorFailures(file, file.model, { hitAt5: 0.7, mrrAt5: 0.495, evidenceRecall: 0.5 })).toEqual(["MRR@5 0.4950 is below its floor 0.5"]);
    expect(floorFailures(file, file.model, { hitAt5: 0.69, mrrAt5: 0.5, evidenceRecall: 0.5 })).toEqual(["hit@5 0.6900 is below its floor 0.7"]);
    expect(floorFailures(file, "e5-small-v2-int8", { hitAt5: 1, mrrAt5: 1, evidenceRecall: 1 })).toEqual([
      expect.stringContaining("recorded with model bge-small"),
    ]);
  });

  it("records only upward, rounded down to four decimals, and a first time for any model", () => {
    expect(ratchetLocomo(file, file.model, { hitAt5: 0.71239, mrrAt5: 0.5, evidenceRecall: 0.55 })).toEqual({
      next: { model: file.model, floors: { hitAt5: 0.7123, mrrAt5: 0.5, evidenceRecall: 0.55 } },
    });
    expect(ratchetLocomo(file, file.model, { hitAt5: 0.8, mrrAt5: 0.4, evidenceRecall: 0.6 })).toEqual({ refused: [expect.stringContaining("MRR@5")] });
    expect(ratchetLocomo(file, "e5-small-v2-int8", { hitAt5: 0.8, mrrAt5: 0.6, evidenceRecall: 0.6 })).toEqual({
      refused: [expect.stringContaining("e5-small")],
    });
    expect(ratchetLocomo(null, "e5-small-v2-int8", { hitAt5: 0.8, mrrAt5: 0.6, evidenceRecall: 0.6 })).toEqual({
      next: { model: "e5-small-v2-int8", floors: { hitAt5: 0.8, mrrAt5: 0.6, evidenceRecall: 0.6 } },
    });
  });

  it("parses its command line", () => {
    expect(parseLocomoArgs(["--record", "--misses"])).toEqual({ record: true, misses: true });
    expect(parseLocomoArgs(["--fit"])).toMatch(/unknown argument: --fit/);
  });
});
