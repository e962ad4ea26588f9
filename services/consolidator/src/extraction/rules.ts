/**
 * The deterministic fact extractor: plain patterns, no model, the same answer every time.
 *
 * - Measures: a number with a unit ("top set 98 kg", "$1,200", "p95 latency 120 ms"). The unit
 *   goes into the predicate as `<quantity>_<unit>` (weight_kg, price_usd, duration_ms), prefixed by
 *   the words just before the number ("top set" → `top_set.weight_kg`); the value is the number.
 * - Dates: ISO (2026-03-01) and written dates (5 March 2026, March 5, 2026) → `<label>.date` with
 *   an ISO value.
 * - "X is Y" statements in a sentence with neither → predicate `x`, value `y` ("Our primary region
 *   is eu-west-1" → `primary_region = eu-west-1`).
 *
 * The subject is the memory's topic as a snake_case slug. One fact per predicate per memory (the
 * first one stated wins), so a memory never proposes two values for the same thing.
 */
import type { ExtractedFact, FactExtractor, MemoryText } from "./extractor.js";

export const RULES_EXTRACTOR_NAME = "rules/1";
/** Most facts one memory yields (the memory service accepts at most 50). */
const MAX_FACTS = 50;
const MAX_LABEL_WORDS = 3;
const MAX_SLUG_LENGTH = 64;
const MAX_STATEMENT_VALUE_WORDS = 8;
const MAX_STATEMENT_VALUE_LENGTH = 200;

interface Unit {
  quantity: string;
  unit: string;
}

const u = (quantity: string, unit: string): Unit => ({ quantity, unit });
/** Unit words (lower case) → what they measure. Ambiguous bare letters (m, t, c, f) are left out on purpose. */
const UNITS: Readonly<Record<string, Unit>> = {
  kg: u("weight", "kg"),
  kgs: u("weight", "kg"),
  kilo: u("weight", "kg"),
  kilos: u("weight", "kg"),
  kilogram: u("weight", "kg"),
  kilograms: u("weight", "kg"),
  g: u("weight", "g"),
  gram: u("weight", "g"),
  grams: u("weight", "g"),
  lb: u("weight", "lb"),
  lbs: u("weight", "lb"),
  pound: u("weight", "lb"),
  pounds: u("weight", "lb"),
  km: u("distance", "km"),
  kilometer: u("distance", "km"),
  kilometers: u("distance", "km"),
  kilometre: u("distance", "km"),
  kilometres: u("distance", "km"),
  meter: u("distance", "m"),
  meters: u("distance", "m"),
  metre: u("distance", "m"),
  metres: u("distance", "m"),
  mi: u("distance", "mi"),
  mile: u("distance", "mi"),
  miles: u("distance", "mi"),
  cm: u("length", "cm"),
  mm: u("length", "mm"),
  ft: u("length", "ft"),
  feet: u("length", "ft"),
  foot: u("length", "ft"),
  ms: u("duration", "ms"),
  millisecond: u("duration", "ms"),
  milliseconds: u("duration", "ms"),
  s: u("duration", "s"),
  sec: u("duration", "s"),
  secs: u("duration", "s"),
  second: u("duration", "s"),
  seconds: u("duration", "s"),
  min: u("duration", "min"),
  mins: u("duration", "min"),
  minute: u("duration", "min"),
  minutes: u("duration", "min"),
  h: u("duration", "h"),
  hr: u("duration", "h"),
  hrs: u("duration", "h"),
  hour: u("duration", "h"),
  hours: u("duration", "h"),
  day: u("duration", "days"),
  days: u("duration", "days"),
  week: u("duration", "weeks"),
  weeks: u("duration", "weeks"),
  "%": u("ratio", "pct"),
  percent: u("ratio", "pct"),
  pct: u("ratio", "pct"),
  "°c": u("temperature", "c"),
  celsius: u("temperature", "c"),
  "°f": u("temperature", "f"),
  fahrenheit: u("temperature", "f"),
  bpm: u("heart_rate", "bpm"),
  rpm: u("rate", "rpm"),
  kcal: u("energy", "kcal"),
  cal: u("energy", "kcal"),
  calories: u("energy", "kcal"),
  kb: u("size", "kb"),
  mb: u("size", "mb"),
  gb: u("size", "gb"),
  tb: u("size", "tb"),
  "km/h": u("speed", "kmh"),
  kmh: u("speed", "kmh"),
  kph: u("speed", "kmh"),
  mph: u("speed", "mph"),
  usd: u("price", "usd"),
  dollar: u("price", "usd"),
  dollars: u("price", "usd"),
  eur: u("price", "eur"),
  euro: u("price", "eur"),
  euros: u("price", "eur"),
  gbp: u("price", "gbp"),
  rep: u("count", "reps"),
  reps: u("count", "reps"),
  sets: u("count", "sets"),
};
const CURRENCY_SIGNS: Readonly<Record<string, Unit>> = { $: u("price", "usd"), "€": u("price", "eur"), "£": u("price", "gbp") };
/** A scale word after the number makes the value ambiguous ("$5 million"): such a number is skipped. */
const SCALE_WORDS = new Set(["k", "m", "bn", "thousand", "million", "billion", "trillion"]);

/** Words that never name what was measured: articles, prepositions, auxiliaries, pronouns, time words, common verbs. */
const STOPWORDS = new Set(
  (
    "a an the of at on in to for with by from about around approx approximately roughly nearly almost over under " +
    "up down into onto per and or but so than then x is are was were be been being am has have had do did does done " +
    "my our your his her their its this that these those i we you he she they it me us them " +
    "today yesterday tomorrow now just only also still again total currently " +
    "ran run runs walked walk cycled rode swam hit hits lifted lift weighed weigh weighs took take takes cost costs " +
    "spent spend paid pay got get gets reached reach measured measure came come comes went go goes will would should can could"
  ).split(" "),
);
const DETERMINERS = new Set(["the", "our", "my", "your", "their", "his", "her", "its", "a", "an", "this", "that", "these", "those"]);
const PRONOUNS = new Set([
  "it",
  "this",
  "that",
  "there",
  "here",
  "he",
  "she",
  "they",
  "we",
  "i",
  "you",
  "which",
  "what",
  "who",
  "everything",
  "nothing",
  "something",
  "anything",
  "all",
  "one",
]);
/** A value starting with one of these is an opinion, a plan or a clause, not a fact. */
const VALUE_SKIP_FIRST = new Set([
  "not",
  "no",
  "never",
  "to",
  "that",
  "because",
  "likely",
  "probably",
  "maybe",
  "also",
  "still",
  "being",
  "going",
  "so",
  "too",
  "very",
  "just",
]);

const MONTHS: Readonly<Record<string, number>> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  sept: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};
const MONTH = "(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)";
const ISO_DATE = /\b(\d{4})-(\d{1,2})-(\d{1,2})\b/g;
const DAY_MONTH_YEAR = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+${MONTH}\\.?,?\\s+(\\d{4})\\b`, "gi");
const MONTH_DAY_YEAR = new RegExp(`\\b${MONTH}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, "gi");
/** A number (thousands commas or a decimal point/comma allowed), an optional currency sign before and unit after. */
const MEASURE = /(?<![\w.,])([$€£])?\s?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?)(?:\s?(km\/h|°\s?[cf]\b|%|[a-z]+))?(?![\w])/gi;
const WORD = /[a-z][a-z0-9'-]*/gi;
const STATEMENT = /^([a-z][\w' -]{0,80}?)\s+(?:is|are|was|were)\s+(.+)$/i;

export class RulesFactExtractor implements FactExtractor {
  readonly name = RULES_EXTRACTOR_NAME;

  async extract(memory: MemoryText): Promise<ExtractedFact[]> {
    return extractFacts(memory);
  }
}

/** The extraction itself, synchronous and pure. */
export function extractFacts(memory: MemoryText): ExtractedFact[] {
  const subject = slug(memory.topic) || "memory";
  const facts: ExtractedFact[] = [];
  const predicates = new Set<string>();
  const add = (predicate: string, value: string, confidence: number, rationale: string) => {
    if (predicate === "" || value === "" || predicates.has(predicate) || facts.length >= MAX_FACTS) return;
    predicates.add(predicate);
    facts.push({ subject, predicate, value, confidence, rationale });
  };

  for (const sentence of sentences(memory.content)) {
    const dates = findDates(sentence);
    for (const date of dates) {
      const label = labelBefore(sentence, 0, date.start);
      add(label ? `${label}.date` : "date", date.iso, 0.7, "rule:date");
    }
    // Dates are blanked out so their digits are not read as measures.
    let text = sentence;
    for (const date of dates) text = text.slice(0, date.start) + " ".repeat(date.end - date.start) + text.slice(date.end);
    const measures = findMeasures(text);
    let labelFrom = 0;
    for (const measure of measures) {
      // The label never reaches back past an earlier measure or date in the same sentence.
      for (const date of dates) if (date.end <= measure.start) labelFrom = Math.max(labelFrom, date.end);
      const label = labelBefore(text, labelFrom, measure.start);
      labelFrom = measure.end;
      const key = `${measure.unit.quantity}_${measure.unit.unit}`;
      add(label ? `${label}.${key}` : key, measure.value, 0.8, `rule:measure(${measure.unit.unit})`);
    }
    if (dates.length === 0 && measures.length === 0) {
      const statement = isStatement(sentence);
      if (statement) add(statement.predicate, statement.value, 0.6, "rule:is-statement");
    }
  }
  return facts;
}

/** snake_case: lower-case letters and digits joined by single underscores. */
export function slug(text: string, max = MAX_SLUG_LENGTH): string {
  const words =
    text
      .normalize("NFKC")
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  let out = "";
  for (const word of words) {
    const next = out === "" ? word : `${out}_${word}`;
    if (next.length > max) break;
    out = next;
  }
  return out;
}

function sentences(content: string): string[] {
  return content
    .split(/(?<=[.!?;])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

interface Span {
  start: number;
  end: number;
}

function findDates(sentence: string): Array<Span & { iso: string }> {
  const found: Array<Span & { iso: string }> = [];
  const push = (match: RegExpMatchArray, year: string, month: number, day: string) => {
    const iso = isoDate(Number(year), month, Number(day));
    const start = match.index!;
    const end = start + match[0].length;
    if (iso && !found.some((f) => start < f.end && end > f.start)) found.push({ start, end, iso });
  };
  for (const m of sentence.matchAll(ISO_DATE)) push(m, m[1]!, Number(m[2]), m[3]!);
  for (const m of sentence.matchAll(DAY_MONTH_YEAR)) push(m, m[3]!, monthNumber(m[2]!), m[1]!);
  for (const m of sentence.matchAll(MONTH_DAY_YEAR)) push(m, m[3]!, monthNumber(m[1]!), m[2]!);
  return found.sort((a, b) => a.start - b.start);
}

function monthNumber(name: string): number {
  return MONTHS[name.toLowerCase().slice(0, name.toLowerCase().startsWith("sept") ? 4 : 3)] ?? 0;
}

/** YYYY-MM-DD for a real calendar day, else null (2026-02-30 is not a date). */
function isoDate(year: number, month: number, day: number): string | null {
  if (year < 1000 || month < 1 || month > 12 || day < 1 || day > 31) return null;
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return date.toISOString().slice(0, 10);
}

function findMeasures(text: string): Array<Span & { value: string; unit: Unit }> {
  const found: Array<Span & { value: string; unit: Unit }> = [];
  for (const m of text.matchAll(MEASURE)) {
    const [whole, sign, digits, unitWord] = m;
    const word = unitWord?.toLowerCase().replace(/\s+/g, "");
    if (word !== undefined && SCALE_WORDS.has(word)) continue;
    const unit = sign ? CURRENCY_SIGNS[sign] : word !== undefined ? UNITS[word] : undefined;
    const value = numberValue(digits!);
    if (!unit || value === null) continue;
    found.push({ start: m.index!, end: m.index! + whole.length, value, unit });
  }
  return found;
}

/** "1,200" → "1200", "98,5" → "98.5", "98" → "98"; anything else ambiguous → null. */
function numberValue(digits: string): string | null {
  if (/^\d{1,3}(,\d{3})+(\.\d+)?$/.test(digits)) return digits.replace(/,/g, "");
  if (/^\d+,\d+$/.test(digits)) return digits.replace(",", ".");
  if (/^\d+(\.\d+)?$/.test(digits)) return digits;
  return null;
}

/** The last few meaningful words of text[from, to), as a slug: what the number right after them measures. */
function labelBefore(text: string, from: number, to: number): string {
  const words = (text.slice(from, to).match(WORD) ?? []).map((w) => w.toLowerCase()).filter((w) => !STOPWORDS.has(w));
  return slug(words.slice(-MAX_LABEL_WORDS).join(" "));
}

/** "X is Y" as predicate x and value y, when X names a thing (not a pronoun) and Y reads like a value. */
function isStatement(sentence: string): { predicate: string; value: string } | null {
  if (sentence.endsWith("?")) return null;
  const match = STATEMENT.exec(sentence.replace(/[.!;]+$/, ""));
  if (!match) return null;
  const subjectWords = match[1]!.trim().split(/\s+/);
  while (subjectWords.length > 0 && DETERMINERS.has(subjectWords[0]!.toLowerCase())) subjectWords.shift();
  if (subjectWords.length === 0 || subjectWords.length > 4 || PRONOUNS.has(subjectWords[0]!.toLowerCase())) return null;
  // A name is words, not numbers or dates ("Deadline 2026-02-30 is wrong" names nothing).
  if (!subjectWords.every((w) => /^[a-z]/i.test(w))) return null;
  const valueWords = match[2]!.trim().split(/\s+/);
  while (valueWords.length > 0 && ["a", "an", "the"].includes(valueWords[0]!.toLowerCase())) valueWords.shift();
  const first = valueWords[0]?.toLowerCase() ?? "";
  if (first === "" || VALUE_SKIP_FIRST.has(first) || first.endsWith("ing") || valueWords.length > MAX_STATEMENT_VALUE_WORDS) return null;
  const value = valueWords.join(" ");
  if (value.length > MAX_STATEMENT_VALUE_LENGTH || /[,:]/.test(value)) return null;
  const predicate = slug(subjectWords.join(" "));
  return predicate === "" ? null : { predicate, value };
}
