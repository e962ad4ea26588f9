/**
 * Reads basic-memory notes as archive records, so the rest of the import treats them like any
 * other archive line. One import line is one note, {path, content, project?}:
 *
 *   the note's prose         → one memory: memoryType = the front matter's `type` when it names one
 *                              of ours, else note; key basic-memory:<permalink>:<digest>
 *   each observation         → one memory: memoryType = its [category] when it names one of ours,
 *                              else fact; content = the item as written after the category;
 *                              key basic-memory:<permalink>:<digest>
 *   each explicit relation   → one fact: subject = the note's title, predicate = the relation type,
 *                              value = the target, tied to the note's first memory;
 *                              key basic-memory-rel:<permalink>:<type>:<target>
 *
 * Every memory's topic is the note's title; its tags are its own #tags and category (when that is
 * no type of ours), then the note's front-matter tags, type and folder. The digest is of the
 * memory's own text, so a re-run of the same folder yields the same keys and an observation added
 * between two others does not shift the keys of the ones after it.
 */
import { createHash } from "node:crypto";
import { AppError } from "@3ngram/errors";
import { MEMORY_TYPES, basicMemoryNoteSchema, parseInput, type MemoryType } from "@3ngram/schema";
import { parseNote, type Note } from "./basic-memory-note.js";
import { boundedKey } from "./import-keys.js";
import { importTags } from "./import-tags.js";

const KEY_PREFIX = "basic-memory";
const RELATION_KEY_PREFIX = "basic-memory-rel";
/** Hex digits of a memory's text digest in its key: 64 bits, ample against two texts of one note colliding. */
const DIGEST_LENGTH = 16;

/**
 * One note line → the archive records it stands for, validated afterwards record by record like
 * any archive line. Throws AppError invalid_input naming the field when the line is no note, its
 * front matter cannot be read, or it holds nothing to import.
 */
export function recordsFromBasicMemoryNote(value: unknown): Array<Record<string, unknown>> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new AppError("invalid_input", "line: a basic-memory note is a JSON object {path, content}", { field: "line" });
  }
  const line = parseInput(basicMemoryNoteSchema, value);
  const note = parseNote(line.content);
  const path = line.path.replaceAll("\\", "/").replace(/^\/+/, "");
  const title = titleOf(note, path);
  const permalink = stringField(note.frontMatter.permalink) ?? path.replace(/\.md$/i, "");
  const noteType = stringField(note.frontMatter.type);
  const folder = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : undefined;
  const noteTags = [...frontMatterTags(note.frontMatter.tags), ...(folder !== undefined ? [`basic-memory-folder:${folder}`] : [])];
  const memory = (memoryType: MemoryType, content: string, tags: readonly unknown[]) => ({
    kind: "memory",
    key: boundedKey(KEY_PREFIX, [permalink, digest(content)]),
    memoryType,
    topic: title,
    content,
    tags: importTags(tags),
    ...(line.project !== undefined ? { project: line.project } : {}),
  });

  const memories: Array<Record<string, unknown> & { key: string }> = [];
  if (note.prose !== "") {
    const type = ourType(noteType);
    memories.push(memory(type ?? "note", note.prose, [...noteTags, type === undefined ? noteType : undefined]));
  }
  for (const observation of note.observations) {
    const type = ourType(observation.category);
    memories.push(memory(type ?? "fact", observation.text, [type === undefined ? observation.category : undefined, ...observation.tags, ...noteTags]));
  }
  const assertedBy = memories[0]?.key ?? null;
  const facts = note.relations.map((relation) => ({
    kind: "fact",
    key: boundedKey(RELATION_KEY_PREFIX, [permalink, relation.type, relation.target]),
    memoryKey: assertedBy,
    subject: title,
    predicate: relation.type,
    value: relation.target,
  }));
  if (memories.length === 0 && facts.length === 0) {
    throw new AppError("invalid_input", "content: the note holds no text, observation or relation to import", { field: "content" });
  }
  return [...memories, ...facts];
}

/** The front matter's title, else the first heading, else the file's name. */
function titleOf(note: Note, path: string): string {
  const fromFrontMatter = stringField(note.frontMatter.title);
  if (fromFrontMatter !== undefined) return fromFrontMatter;
  if (note.firstHeading !== undefined && note.firstHeading !== "") return note.firstHeading;
  const name = path.slice(path.lastIndexOf("/") + 1).replace(/\.md$/i, "");
  return name === "" ? path : name;
}

/** A list of tags, or one string of them separated by commas (both occur in front matter written by hand). */
function frontMatterTags(value: unknown): unknown[] {
  if (Array.isArray(value)) return value.map((tag) => (typeof tag === "number" ? String(tag) : tag));
  if (typeof value === "string") return value.split(",");
  return [];
}

function stringField(value: unknown): string | undefined {
  if (typeof value === "number") return String(value);
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

function ourType(name: string | null | undefined): MemoryType | undefined {
  const wanted = name?.trim().toLowerCase();
  return MEMORY_TYPES.find((type) => type === wanted);
}

function digest(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, DIGEST_LENGTH);
}
