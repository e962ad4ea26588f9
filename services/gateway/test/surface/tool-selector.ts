/**
 * The tool-selection eval's selector and metrics. Deterministic and offline: the bundled sentence
 * embedding model (Universal Sentence Encoder Lite) for meaning, blended with an IDF-weighted
 * lexical overlap for the exact words agents use. It stands in for a model choosing a tool from
 * name + description alone, so a description that reads like another tool's shows up here as a
 * lower margin or a wrong pick before it reaches a real agent.
 */
import { cosineSimilarity, type Embedder } from "@3ngram/embeddings";

/** Weight of the embedding similarity; the rest is lexical overlap. Part of the eval's definition. */
export const SEMANTIC_WEIGHT = 0.6;

export interface ToolDoc {
  name: string;
  description: string;
}

interface Selection {
  utterance: string;
  expected: string;
  chosen: string;
  /** Score of the expected tool minus the best score of any other tool (negative when wrong). */
  margin: number;
}

export interface EvalReport {
  tools: number;
  utterances: number;
  accuracy: number;
  meanMargin: number;
  minMargin: number;
  /** The most similar pair of tool descriptions (embedding cosine). */
  overlap: number;
  overlapPair: [string, string];
  selections: Selection[];
}

const STOPWORDS = new Set(
  (
    "a an and are as at be but by can could did do does for from had has have how i if in into is it its it's me my of on or our " +
    "so that the their them then there these they this those to up us was we were what when where which who why will with would " +
    "you your i'm i've we'll we're let's should need just now also any all some than too very"
  ).split(" "),
);

/** Lower-cased word stems: a crude suffix strip, enough to match "memories"/"memory" and "stored"/"store" (not "decided"/"decision"). */
function terms(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/_/g, " ")
    .split(/[^a-z0-9']+/)
    .map((w) => w.replace(/'s$/, "").replace(/'/g, ""))
    .filter((w) => w.length > 1 && !STOPWORDS.has(w))
    .map(stem);
}

function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith("ies")) w = `${w.slice(0, -3)}y`;
  else if (w.length > 3 && w.endsWith("s") && !w.endsWith("ss") && !w.endsWith("us")) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith("ing")) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith("ed")) w = w.slice(0, -2);
  if (w.length > 4 && w.endsWith("e")) w = w.slice(0, -1);
  return w;
}

/** The text a tool is judged by: its name (underscores as spaces) and its description. */
function toolText(tool: ToolDoc): string {
  return `${tool.name.replace(/_/g, " ")}: ${tool.description}`;
}

/**
 * Lexical overlap of an utterance with each tool: the IDF-weighted share of the utterance's terms
 * (those any tool uses) that the tool's text contains. Terms every tool shares count for little.
 */
function lexicalScores(utterance: string, tools: readonly ToolDoc[]): number[] {
  const docs = tools.map((t) => new Set(terms(toolText(t))));
  const df = new Map<string, number>();
  for (const doc of docs) for (const term of doc) df.set(term, (df.get(term) ?? 0) + 1);
  const idf = (term: string) => Math.log(1 + tools.length / (df.get(term) ?? 1));
  const query = [...new Set(terms(utterance))].filter((t) => df.has(t));
  const total = query.reduce((sum, t) => sum + idf(t), 0);
  return docs.map((doc) => (total === 0 ? 0 : query.filter((t) => doc.has(t)).reduce((sum, t) => sum + idf(t), 0) / total));
}

/** Scores every tool for every utterance and reports accuracy, margins and description overlap. */
export async function evaluate(embedder: Embedder, tools: readonly ToolDoc[], cases: readonly { utterance: string; expected: string }[]): Promise<EvalReport> {
  const toolVectors = await embedder.embed(tools.map(toolText));
  const descriptionVectors = await embedder.embed(tools.map((t) => t.description));
  // An utterance is what an agent asks; the tools' texts are what is searched.
  const utteranceVectors = await embedder.embed(
    cases.map((c) => c.utterance),
    { purpose: "query" },
  );

  const selections = cases.map((c, i): Selection => {
    const lexical = lexicalScores(c.utterance, tools);
    const scores = tools.map((t, j) => SEMANTIC_WEIGHT * cosineSimilarity(utteranceVectors[i]!, toolVectors[j]!) + (1 - SEMANTIC_WEIGHT) * lexical[j]!);
    const expectedIndex = tools.findIndex((t) => t.name === c.expected);
    if (expectedIndex < 0) throw new Error(`utterance for unknown tool ${c.expected}`);
    let best = 0;
    let bestWrong = Number.NEGATIVE_INFINITY;
    scores.forEach((s, j) => {
      if (s > scores[best]!) best = j;
      if (j !== expectedIndex && s > bestWrong) bestWrong = s;
    });
    return { utterance: c.utterance, expected: c.expected, chosen: tools[best]!.name, margin: scores[expectedIndex]! - bestWrong };
  });

  let overlap = Number.NEGATIVE_INFINITY;
  let overlapPair: [string, string] = ["", ""];
  for (let a = 0; a < tools.length; a++) {
    for (let b = a + 1; b < tools.length; b++) {
      const similarity = cosineSimilarity(descriptionVectors[a]!, descriptionVectors[b]!);
      if (similarity > overlap) {
        overlap = similarity;
        overlapPair = [tools[a]!.name, tools[b]!.name];
      }
    }
  }

  const margins = selections.map((s) => s.margin);
  return {
    tools: tools.length,
    utterances: cases.length,
    accuracy: selections.filter((s) => s.chosen === s.expected).length / cases.length,
    meanMargin: margins.reduce((a, b) => a + b, 0) / margins.length,
    minMargin: Math.min(...margins),
    overlap,
    overlapPair,
    selections,
  };
}
