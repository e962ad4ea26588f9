/**
 * The import fixtures the real tools wrote (test/fixtures/basic-memory, test/fixtures/mem0; their
 * READMEs say how), read as the tests need them, and what they hold.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { REPO_ROOT } from "./processes.js";

/** A basic-memory project folder written by basic-memory's own CLI. */
export const BASIC_MEMORY_FOLDER = join(REPO_ROOT, "test/fixtures/basic-memory/atlas");
/** Its three notes hold 3 + 3 + 3 observations, prose in two of them and four relations. */
export const BASIC_MEMORY_RECORDS = { memories: 11, facts: 4 };

/** mem0 get_all answers, one per line, written by mem0 itself. */
export const MEM0_GET_ALL_FILE = join(REPO_ROOT, "test/fixtures/mem0/get_all.ndjson");

/** The fixture's notes as basic-memory import lines, in path order. */
export function basicMemoryNotes(): Array<{ path: string; content: string }> {
  return readdirSync(BASIC_MEMORY_FOLDER, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".md"))
    .map((e) => join(e.parentPath, e.name))
    .sort()
    .map((file) => ({ path: relative(BASIC_MEMORY_FOLDER, file).split(sep).join("/"), content: readFileSync(file, "utf8") }));
}

interface Mem0Memory {
  id: string;
  memory: string;
  created_at: string;
  user_id?: string;
  agent_id?: string;
  run_id?: string;
  metadata: Record<string, unknown> | null;
}

/** Every memory of the mem0 fixture, in file order. */
export function mem0FixtureMemories(): Mem0Memory[] {
  return readFileSync(MEM0_GET_ALL_FILE, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .flatMap((line) => (JSON.parse(line) as { results: Mem0Memory[] }).results);
}
