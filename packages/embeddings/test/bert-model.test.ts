import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { Tokenizer } from "@huggingface/tokenizers";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

import { poolHiddenState, truncateIds } from "../src/bert-model.js";
import { bundledModel, fetchedModels } from "../src/bundled-models.js";
import { cosineSimilarity } from "../src/cosine.js";
import { LocalModelEmbedder } from "../src/local-model.js";
import { modelCacheDir, modelFiles } from "../src/model-cache.js";

/**
 * The first six components of two unit vectors per model, computed independently with Hugging
 * Face's Python `tokenizers` (0.23) and Python ONNX Runtime (1.30) on the same cached files: the
 * first text as a stored document, the second as a query, each with the model's own prefix.
 */
const PYTHON_REFERENCE = {
  "bge-small-en-v1.5": {
    document: [-0.061448, 0.022534, -0.043029, -0.052018, 0.033384, -0.02544],
    query: [-0.017293, 0.0717, 0.011131, -0.004654, 0.045248, 0.02525],
  },
  "e5-small-v2": {
    document: [-0.084872, 0.062017, -0.023166, -0.010051, -0.031894, -0.018965],
    query: [-0.067001, 0.080652, 0.034247, 0.011806, 0.014468, -0.026717],
  },
  "all-minilm-l6-v2": {
    document: [-0.026918, 0.026063, -0.081367, 0.060283, -0.067071, -0.024421],
    query: [-0.023273, 0.063629, -0.042711, 0.053278, 0.019805, -0.039963],
  },
} as const;
const DOCUMENT = "The team decided to use PostgreSQL for storage";
const QUERY = "What did we decide about storage?";

/** Token ids the Python tokenizer gives for bge's tokenizer.json (lower-casing, accents stripped, unknown CJK/emoji). */
const PYTHON_TOKEN_IDS: Record<string, number[]> = {
  "Café naïve résumé — 中文 😀": [101, 7668, 15743, 13746, 1517, 1746, 1861, 100, 102],
  "getUserById(tenantId, 42) -> Promise<User>": [101, 2131, 20330, 3762, 3593, 1006, 16713, 3593, 1010, 4413, 1007, 1011, 1028, 4872, 1026, 5310, 1028, 102],
  "   spaced\tout  ": [101, 19835, 2041, 102],
};

describe("the fetched BERT-style models (make test fetches them: npm run models -- --all)", () => {
  for (const spec of fetchedModels()) {
    describe(spec.name, () => {
      const embedder = new LocalModelEmbedder({ model: spec.name as never });

      it("computes the vectors Python's tokenizers and ONNX Runtime compute, with the model's prefixes", { timeout: 60_000 }, async () => {
        const reference = PYTHON_REFERENCE[spec.name as keyof typeof PYTHON_REFERENCE];
        const [document] = await embedder.embed([DOCUMENT]);
        const [query] = await embedder.embed([QUERY], { purpose: "query" });
        expect(document).toHaveLength(spec.dimensions);
        document!.slice(0, 6).forEach((value, i) => expect(value).toBeCloseTo(reference.document[i]!, 5));
        query!.slice(0, 6).forEach((value, i) => expect(value).toBeCloseTo(reference.query[i]!, 5));
        expect(embedder.model).toBe(spec.id);
      });

      it("gives a text the same vector alone as among others, and puts related texts closer than unrelated", { timeout: 60_000 }, async () => {
        const texts = [DOCUMENT, "We picked Postgres as our database", "My cat likes to sleep in the sun", "x ".repeat(600)];
        const together = await embedder.embed(texts);
        for (const [i, text] of texts.entries()) {
          const [alone] = await embedder.embed([text]);
          expect(alone).toEqual(together[i]);
        }
        expect(cosineSimilarity(together[0]!, together[1]!)).toBeGreaterThan(cosineSimilarity(together[0]!, together[2]!) + 0.1);
      });

      it("marks queries the way the model was trained, and documents likewise", { timeout: 60_000 }, async () => {
        const [asDocument] = await embedder.embed([QUERY]);
        const [asQuery] = await embedder.embed([QUERY], { purpose: "query" });
        if (spec.prefix.query === spec.prefix.document) expect(asQuery).toEqual(asDocument);
        else expect(cosineSimilarity(asQuery!, asDocument!)).toBeLessThan(0.9999);
      });
    });
  }

  it("tokenises as Hugging Face's own tokenizer does", () => {
    const files = modelFiles(modelCacheDir(), bundledModel("bge-small-en-v1.5") as never);
    const tokenizer = new Tokenizer(JSON.parse(readFileSync(files.tokenizer, "utf8")) as object, {});
    for (const [text, ids] of Object.entries(PYTHON_TOKEN_IDS)) expect(tokenizer.encode(text).ids).toEqual(ids);
  });

  it("refuses to start without its files, saying how to fetch them", async () => {
    const empty = mkdtempSync(join(tmpdir(), "3ngram-models-"));
    try {
      const embedder = new LocalModelEmbedder({ model: "bge-small-en-v1.5", cacheDir: empty });
      await expect(embedder.embed(["x"])).rejects.toThrow(/npm run models.*EMBEDDINGS_MODEL_CACHE/s);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe("truncateIds", () => {
  it("keeps a short text whole and cuts a long one to the limit with its closing separator", () => {
    expect(truncateIds([101, 5, 6, 102], 8)).toEqual([101, 5, 6, 102]);
    expect(truncateIds([101, 1, 2, 3, 4, 5, 102], 4)).toEqual([101, 1, 2, 102]);
  });
});

describe("poolHiddenState", () => {
  // Three tokens of width two: [1, 2], [3, 4], [5, 9].
  const hidden = new Float32Array([1, 2, 3, 4, 5, 9]);
  it("takes the first token's vector for CLS pooling", () => {
    expect(poolHiddenState(hidden, 3, 2, "cls")).toEqual([1, 2]);
  });
  it("averages every token for mean pooling", () => {
    expect(poolHiddenState(hidden, 3, 2, "mean")).toEqual([3, 5]);
  });
});
