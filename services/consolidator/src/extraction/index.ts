export type { FactExtractor } from "./extractor.js";
export { LlmFactExtractor } from "./llm.js";
export { RULES_EXTRACTOR_NAME, RulesFactExtractor, extractFacts, slug } from "./rules.js";

import type { FactExtractor } from "./extractor.js";
import { LlmFactExtractor } from "./llm.js";
import { RulesFactExtractor } from "./rules.js";

export type ExtractorConfig = { kind: "rules" } | { kind: "llm"; baseUrl: string; model: string; apiKey?: string | undefined; timeoutMs: number };

/** The configured extractor: the deterministic rules unless an LLM was switched on. */
export function createExtractor(config: ExtractorConfig): FactExtractor {
  return config.kind === "llm" ? new LlmFactExtractor(config) : new RulesFactExtractor();
}
