/**
 * The fact-extractor interface. An extractor reads one memory and returns the measurable claims it
 * states as subject / predicate / value triples: the unit lives in the predicate and each fact holds
 * one measure (subject back_squat, predicate top_set.weight_kg, value 98). Whatever it returns only
 * becomes a proposal; a person accepts it before get_facts sees it.
 */

/** What an extractor reads. */
export interface MemoryText {
  memoryType: string;
  topic: string;
  content: string;
}

export interface ExtractedFact {
  subject: string;
  predicate: string;
  value: string;
  /** 0..1: how sure the extractor is. */
  confidence: number;
  /** Which rule (or model) found it; never the matched text. */
  rationale: string;
}

export interface FactExtractor {
  /** Recorded on every proposal, e.g. "rules/1" or "llm/<model>". */
  readonly name: string;
  extract(memory: MemoryText, options?: { signal?: AbortSignal }): Promise<ExtractedFact[]>;
}
