/**
 * What the operator CLI's import reads, as import lines: a file of lines as it is (our archive,
 * the MCP memory server's JSONL, mem0's memories or basic-memory note lines), a saved mem0
 * `get_all` answer written over several lines, or, for basic-memory, a folder of notes, a tar of
 * one (.tar, .tar.gz, .tgz) or a single note, each note becoming one {path, content} line. Every
 * line carries a label for the report: the note's path, or nothing for a line of a file.
 */
import { createReadStream } from "node:fs";
import { readFile, readdir, stat } from "node:fs/promises";
import { basename, join, relative, sep } from "node:path";
import { createInterface } from "node:readline";
import type { ImportFormat } from "@3ngram/schema";
import { readTarFiles } from "./tar-reader.js";

export interface SourceLine {
  text: string;
  /** Where the line came from, when that is more than its line number (a note's path). */
  label?: string;
}

const TAR_NAME = /\.(tar|tar\.gz|tgz)$/i;
const NOTE_NAME = /\.md$/i;

export async function* importSource(path: string, format: ImportFormat, options: { project?: string | undefined } = {}): AsyncGenerator<SourceLine> {
  const info = await stat(path);
  if (format === "basic-memory" && (info.isDirectory() || TAR_NAME.test(path) || NOTE_NAME.test(path))) {
    for await (const note of notes(path, info.isDirectory())) {
      yield {
        text: JSON.stringify({ path: note.path, content: note.content, ...(options.project !== undefined ? { project: options.project } : {}) }),
        label: note.path,
      };
    }
    return;
  }
  if (info.isDirectory()) throw new Error(`${path} is a folder; only format basic-memory reads a folder`);
  if (format === "mem0" && (await startsWithBareBracket(path))) {
    yield* mem0Answer(path);
    return;
  }
  const lines = createInterface({ input: createReadStream(path, { encoding: "utf8" }), crlfDelay: Infinity });
  for await (const text of lines) yield { text };
}

/** The notes of a folder (hidden folders, such as .git or .obsidian, are passed over), of a tar, or one note. */
async function* notes(path: string, isFolder: boolean): AsyncGenerator<{ path: string; content: string }> {
  if (isFolder) {
    for (const file of await markdownFiles(path)) {
      yield { path: relative(path, file).split(sep).join("/"), content: await readFile(file, "utf8") };
    }
  } else if (TAR_NAME.test(path)) {
    const files = (await readTarFiles(path, (name) => isVisibleNote(withoutDotSlash(name)))).map((f) => ({
      path: withoutDotSlash(f.path),
      content: f.content,
    }));
    const root = commonFolder(files.map((f) => f.path));
    for (const file of files.sort((a, b) => compare(a.path, b.path))) {
      yield { path: file.path.slice(root.length), content: file.content.toString("utf8") };
    }
  } else {
    yield { path: basename(path), content: await readFile(path, "utf8") };
  }
}

/** Every Markdown file under the folder, in byte order of their paths, so runs number lines alike. */
async function markdownFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .filter((file) => isVisibleNote(relative(folder, file).split(sep).join("/")));
  return files.sort(compare);
}

/** `tar cf notes.tar .` names its entries ./a.md. */
function withoutDotSlash(name: string): string {
  return name.replace(/^(\.\/)+/, "");
}

/** A Markdown note outside any hidden folder (.git, .obsidian), by its `/`-separated path inside the folder or archive. */
function isVisibleNote(path: string): boolean {
  return NOTE_NAME.test(path) && !path.split("/").some((part) => part.startsWith("."));
}

/**
 * `tar czf atlas.tgz atlas` packs the folder itself: when every note lies under one top folder,
 * that folder is the project's root, so paths (and the folder tags made of them) read as they do
 * when the folder is imported unpacked.
 */
function commonFolder(paths: readonly string[]): string {
  const first = paths[0]?.split("/")[0];
  if (first === undefined || paths.some((p) => !p.startsWith(`${first}/`))) return "";
  return `${first}/`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A line holding only `{` or `[` opens JSON written over several lines: a saved get_all answer, not lines of memories. */
async function startsWithBareBracket(path: string): Promise<boolean> {
  const lines = createInterface({ input: createReadStream(path, { encoding: "utf8" }), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    lines.close();
    return line.trim() === "{" || line.trim() === "[";
  }
  return false;
}

/** A whole get_all answer ({results: [...]} or a bare array): one line per memory. */
async function* mem0Answer(path: string): AsyncGenerator<SourceLine> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, "utf8"));
  } catch {
    throw new Error(`${path} starts like one JSON document but is not valid JSON`);
  }
  const items = Array.isArray(value) ? value : (value as { results?: unknown }).results;
  if (!Array.isArray(items)) throw new Error(`${path} is one JSON document, but neither a get_all answer ({"results": [...]}) nor an array of memories`);
  for (const item of items) yield { text: JSON.stringify(item) };
}
