/**
 * An optional fact extractor backed by an OpenAI-compatible chat-completions API. Off by default:
 * it sends the memory's topic and content to that API, so an operator turns it on deliberately
 * (FACT_EXTRACTOR=llm). It sits behind the same interface as the rules, and whatever it answers is
 * validated and only ever becomes a proposal.
 */
import { z } from "zod";
import { createOpenAIClient, describeOpenAIFailure, type OpenAIClient } from "@3ngram/embeddings";
import { PermanentJobError, UnavailableJobError } from "@3ngram/queue";
import type { ExtractedFact, FactExtractor, MemoryText } from "./extractor.js";
import { slug } from "./rules.js";

export interface LlmExtractorOptions {
  /** e.g. https://api.openai.com/v1 (the SDK appends /chat/completions). */
  baseUrl: string;
  model: string;
  apiKey?: string | undefined;
  timeoutMs: number;
}

const MAX_FACTS = 50;
const DEFAULT_CONFIDENCE = 0.5;

const INSTRUCTIONS = [
  "You extract measurable facts from one memory of a personal knowledge base.",
  'Answer with JSON only: {"facts": [{"subject": string, "predicate": string, "value": string, "confidence": number}]}.',
  "subject: what the fact is about, snake_case (use the topic when nothing more specific is named).",
  "predicate: snake_case with dots; put the unit in the predicate and keep one measure per fact,",
  'e.g. subject "back_squat", predicate "top_set.weight_kg", value "98" (never "98kg x 3").',
  "value: the bare value as text. confidence: 0 to 1.",
  'Only facts the text states; no guesses. No facts: {"facts": []}.',
].join(" ");

/** What the model answers, read leniently: a malformed entry is dropped, not fatal. */
const answerSchema = z.object({ facts: z.array(z.unknown()).default([]) });
const factSchema = z.object({
  subject: z.string().trim().min(1).max(256),
  predicate: z.string().trim().min(1).max(256),
  value: z
    .union([z.string(), z.number(), z.boolean()])
    .transform((v) => String(v).trim())
    .pipe(z.string().min(1).max(2000)),
  confidence: z.number().min(0).max(1).optional(),
});
const completionSchema = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string().nullable().optional() }) })).min(1),
});

export class LlmFactExtractor implements FactExtractor {
  readonly name: string;
  private readonly client: OpenAIClient;

  constructor(private readonly options: LlmExtractorOptions) {
    this.name = `llm/${options.model}`.slice(0, 128);
    this.client = createOpenAIClient({ baseUrl: options.baseUrl, apiKey: options.apiKey, timeoutMs: options.timeoutMs }, "LlmFactExtractor");
  }

  async extract(memory: MemoryText, options: { signal?: AbortSignal } = {}): Promise<ExtractedFact[]> {
    let answer: unknown;
    try {
      answer = await this.client.sdk.chat.completions.create(
        {
          model: this.options.model,
          temperature: 0,
          response_format: { type: "json_object" },
          messages: [
            { role: "system", content: INSTRUCTIONS },
            { role: "user", content: JSON.stringify({ memoryType: memory.memoryType, topic: memory.topic, content: memory.content }) },
          ],
        },
        options.signal ? { signal: options.signal } : {},
      );
    } catch (error) {
      const failure = describeOpenAIFailure(error, `${this.client.where}/chat/completions`, this.options.timeoutMs, options.signal);
      if (failure === null) throw options.signal!.reason;
      const message = `fact extractor ${failure.message}`;
      // A provider that is down, throttling or slow is an outage: a job that outlives its attempts
      // that way is dead-lettered as `unavailable`, which the sweep re-drives, not lost as `error`.
      throw failure.retryable ? new UnavailableJobError(message) : new PermanentJobError(message);
    }
    const completion = completionSchema.safeParse(answer);
    if (!completion.success) throw new Error("fact extractor answered without a completion");
    const content = completion.data.choices[0]!.message.content ?? "";
    return parseFacts(content, slug(memory.topic) || "memory", this.name);
  }
}

/** The model's JSON → facts, each validated on its own; anything unusable is dropped. */
function parseFacts(content: string, fallbackSubject: string, extractor: string): ExtractedFact[] {
  let json: unknown;
  try {
    json = JSON.parse(content.trim().replace(/^```(?:json)?\s*|\s*```$/g, ""));
  } catch {
    throw new Error("fact extractor answered malformed JSON");
  }
  const answer = answerSchema.safeParse(json);
  if (!answer.success) throw new Error("fact extractor answered an unexpected shape");
  const facts: ExtractedFact[] = [];
  const seen = new Set<string>();
  for (const raw of answer.data.facts) {
    const fact = factSchema.safeParse(raw);
    if (!fact.success) continue;
    const subject = slug(fact.data.subject) || fallbackSubject;
    const predicate = fact.data.predicate
      .toLowerCase()
      .replace(/[^a-z0-9_.]+/g, "_")
      .replace(/^[_.]+|[_.]+$/g, "")
      .slice(0, 256);
    const key = `${subject}\u0000${predicate}`;
    if (predicate === "" || seen.has(key)) continue;
    seen.add(key);
    facts.push({ subject, predicate, value: fact.data.value, confidence: fact.data.confidence ?? DEFAULT_CONFIDENCE, rationale: `model:${extractor}` });
    if (facts.length >= MAX_FACTS) break;
  }
  return facts;
}
