/** What a loaded local model offers: raw (not yet normalised) vectors for a batch of prepared texts. */
export interface LocalModelRunner {
  embed(texts: string[]): Promise<number[][]>;
}
