/**
 * Reads one basic-memory note (a Markdown file) the way basic-memory itself reads it, as far as an
 * import needs: the YAML front matter, the observation list items (`- [category] text #tag
 * (context)`), the explicit relation list items (`- relation_type [[Target]] (context)`) and
 * whatever else the note says (its prose). Fenced code and block quotes are prose, as they are to
 * basic-memory. Only the note's own text is read: nothing here knows about keys or memories.
 */
import { AppError } from "@3ngram/errors";
import { parse as parseYaml } from "yaml";

interface Observation {
  /** The bracketed category as written, or null for a tagged item without one. */
  category: string | null;
  /** The item after its category: text, #tags and (context) as written. */
  text: string;
  tags: string[];
}

interface Relation {
  type: string;
  target: string;
}

export interface Note {
  frontMatter: Record<string, unknown>;
  observations: Observation[];
  relations: Relation[];
  /** The lines that are neither front matter, observations, relations nor section headings for them. */
  prose: string;
  /** The text of the note's first heading, if it has one. */
  firstHeading: string | undefined;
}

const FRONT_MATTER_FENCE = /^---\s*$/;
const FRONT_MATTER_END = /^(---|\.\.\.)\s*$/;
const CODE_FENCE = /^\s*(```|~~~)/;
const LIST_ITEM = /^\s*[-*+]\s+(.+?)\s*$/;
/** `[category] text`; a category holds no brackets or parentheses. */
const CATEGORY = /^\[([^[\]()]+)\]\s+(.+)$/;
/** Transcript time codes ([00:01:02], [1:02 - 1:05]) share the shape but are not categories. */
const TIMESTAMP_CATEGORY = /^\d{1,3}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?(?:\s+-\s+\d{1,3}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?)?$/;
/** Section headings basic-memory writes around its lists; they say nothing once the lists are read. */
const LIST_HEADING = /^#{1,6}\s+(observations|relations)\s*$/i;
const HEADING = /^#{1,6}\s/;

export function parseNote(markdown: string): Note {
  const lines = markdown.replace(/^\uFEFF/, "").split(/\r?\n/);
  const { frontMatter, bodyStart } = readFrontMatter(lines);
  const observations: Observation[] = [];
  const relations: Relation[] = [];
  const prose: string[] = [];
  let fence: string | undefined;
  for (const line of lines.slice(bodyStart)) {
    const fenceMark = CODE_FENCE.exec(line)?.[1];
    if (fence !== undefined) {
      if (fenceMark === fence) fence = undefined;
      prose.push(line);
      continue;
    }
    if (fenceMark !== undefined) {
      fence = fenceMark;
      prose.push(line);
      continue;
    }
    const item = LIST_ITEM.exec(line)?.[1];
    const relation = item === undefined ? undefined : readRelation(item);
    const observation = item === undefined || relation !== undefined ? undefined : readObservation(item);
    if (relation) relations.push(relation);
    else if (observation) observations.push(observation);
    else if (!LIST_HEADING.test(line.trim())) prose.push(line);
  }
  const text = prose.join("\n").trim();
  // Headings alone (a title repeated as `# Title`) are no text worth a memory.
  const saysSomething = prose.some((line) => line.trim() !== "" && !HEADING.test(line.trim()));
  const firstHeading = /^#{1,6}\s+(.+?)\s*#*\s*$/m.exec(text)?.[1];
  return { frontMatter, observations, relations, prose: saysSomething ? text : "", firstHeading };
}

function readFrontMatter(lines: readonly string[]): { frontMatter: Record<string, unknown>; bodyStart: number } {
  if (!FRONT_MATTER_FENCE.test(lines[0] ?? "")) return { frontMatter: {}, bodyStart: 0 };
  const end = lines.findIndex((line, i) => i > 0 && FRONT_MATTER_END.test(line));
  if (end === -1) throw invalidNote("the front matter has no closing ---");
  let value: unknown;
  try {
    value = parseYaml(lines.slice(1, end).join("\n"));
  } catch {
    throw invalidNote("the front matter is not valid YAML");
  }
  if (value === null || value === undefined) return { frontMatter: {}, bodyStart: end + 1 };
  if (typeof value !== "object" || Array.isArray(value)) throw invalidNote("the front matter is not a mapping of names to values");
  return { frontMatter: value as Record<string, unknown>, bodyStart: end + 1 };
}

/**
 * `type [[Target]]`, `"multi word type" [[Target]]`, optionally followed by one `(context)`.
 * An unquoted type with spaces, or text after the target, makes the item a sentence that happens
 * to hold a link: basic-memory reads those as prose with inline links, and so do we.
 */
function readRelation(item: string): Relation | undefined {
  const start = item.indexOf("[[");
  const end = item.indexOf("]]", start + 2);
  if (start <= 0 || end === -1) return undefined;
  const before = item.slice(0, start).trim();
  const quote = before[0];
  let type: string;
  if ((quote === '"' || quote === "'") && before.length > 1 && before.endsWith(quote)) type = before.slice(1, -1).trim();
  else if (/\s/.test(before)) return undefined;
  else type = before;
  const target = item.slice(start + 2, end).trim();
  const after = item.slice(end + 2).trim();
  if (type === "" || target === "" || (after !== "" && !isOneParenthesised(after))) return undefined;
  return { type, target };
}

function isOneParenthesised(text: string): boolean {
  if (!text.startsWith("(")) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] === "(") depth += 1;
    else if (text[i] === ")") {
      depth -= 1;
      if (depth === 0) return i === text.length - 1;
    }
  }
  return false;
}

/** `[category] text …`, or text carrying a #tag; task items (`[ ]`, `[x]`, `[-]`) and links are not observations. */
function readObservation(item: string): Observation | undefined {
  if (/^\[[ xX-]\]/.test(item)) return undefined;
  if (/^\[.*?\]\(.*?\)$/.test(item) || /^\[\[.*?\]\]$/.test(item)) return undefined;
  const match = CATEGORY.exec(item);
  const category = match?.[1]?.trim();
  if (match && category !== undefined && !TIMESTAMP_CATEGORY.test(category) && !isTaskMarker(category)) {
    const text = match[2]!.trim();
    return { category, text, tags: hashTags(text) };
  }
  const tags = hashTags(item);
  return tags.length > 0 ? { category: null, text: item, tags } : undefined;
}

/** One-character categories other than letters and digits, and x, are task-list states ([/], [?], [X]). */
function isTaskMarker(category: string): boolean {
  return category.length === 1 && (category === "x" || category === "X" || !/^[\p{L}\p{N}]$/u.test(category));
}

/** Words starting with #, outside the trailing (context); `#a#b` is two tags. */
function hashTags(text: string): string[] {
  const withoutContext = text.endsWith(")") && text.lastIndexOf("(") !== -1 ? text.slice(0, text.lastIndexOf("(")) : text;
  return withoutContext
    .split(/\s+/)
    .filter((word) => word.startsWith("#"))
    .flatMap((word) => word.split("#"))
    .filter((tag) => tag !== "");
}

function invalidNote(message: string): AppError {
  return new AppError("invalid_input", `content: ${message}`, { field: "content" });
}
