// Tokenizer of Universal Sentence Encoder Lite: a unigram SentencePiece segmentation (the highest
// total score over the vocabulary's pieces) with exactly the conventions of the model library's
// tokenizer, so both give the same ids for every text. The library's version copies the rest of
// the text at every position, which makes it quadratic in the text's length (~33 ms for 3,000
// characters, ~0.2 s at the 8,000-character input limit); this one walks the vocabulary trie in
// place and is linear.

/** The vocabulary file's rows: a piece and its score, in id order. */
export type UseVocabulary = readonly (readonly [string, number])[];

/** Ids below this are control symbols that never match text. */
const RESERVED_IDS = 6;
/** SentencePiece's word-boundary marker, which stands for a space and starts the text. */
const WORD_BOUNDARY = "\u2581";
/** Id of the unknown piece: a symbol no piece covers becomes this, with score 0. */
const UNKNOWN_ID = 0;

interface TrieNode {
  children: Map<string, TrieNode>;
  /** Id of the piece ending here, or -1. */
  id: number;
  score: number;
}

const newNode = (): TrieNode => ({ children: new Map(), id: -1, score: 0 });

export class UseTokenizer {
  private readonly root = newNode();
  /** Length of each piece in UTF-16 code units, as the library steps back over them. */
  private readonly pieceLengths: Int32Array;

  constructor(vocabulary: UseVocabulary) {
    this.pieceLengths = Int32Array.from(vocabulary, ([piece]) => piece.length);
    for (let id = RESERVED_IDS; id < vocabulary.length; id++) {
      const [piece, score] = vocabulary[id]!;
      let node = this.root;
      for (const symbol of piece) {
        let child = node.children.get(symbol);
        if (child === undefined) {
          child = newNode();
          node.children.set(symbol, child);
        }
        node = child;
      }
      // A piece listed twice keeps its last id and score, as in the library.
      if (node !== this.root) {
        node.id = id;
        node.score = score;
      }
    }
  }

  encode(text: string): number[] {
    const normalized = text.normalize("NFKC");
    if (normalized.length === 0) return [];
    const symbols = Array.from(WORD_BOUNDARY + normalized.replaceAll(" ", WORD_BOUNDARY));
    const n = symbols.length;
    // best[end]: the best total score of a segmentation of symbols[0, end); 0 also means "none yet",
    // a convention of the library that decides some ties and is kept for identical ids.
    const best = new Float64Array(n + 1);
    const lastPiece = new Int32Array(n + 1);
    const relax = (end: number, score: number, id: number) => {
      if (best[end] === 0 || score >= best[end]!) {
        best[end] = score;
        lastPiece[end] = id;
      }
    };
    // Pieces ending at a position are considered in increasing start order, as the library does,
    // and best[start] is final by the time pieces starting there are considered.
    for (let start = 0; start < n; start++) {
      let matched = false;
      let node = this.root.children.get(symbols[start]!);
      for (let at = start; node !== undefined;) {
        if (node.id >= 0) {
          relax(at + 1, node.score + best[start]!, node.id);
          matched = true;
        }
        at += 1;
        node = at < n ? node.children.get(symbols[at]!) : undefined;
      }
      if (!matched) relax(start + 1, best[start]!, UNKNOWN_ID);
    }

    // Back from the end, one piece at a time; runs of unknown pieces collapse into one.
    const ids: number[] = [];
    for (let end = n; end > 0; end -= this.pieceLengths[lastPiece[end]!]!) {
      const id = lastPiece[end]!;
      if (!(id === UNKNOWN_ID && ids.length > 0 && ids[ids.length - 1] === UNKNOWN_ID)) ids.push(id);
    }
    return ids.reverse();
  }
}
