/**
 * The import fixtures the real tools wrote (test/fixtures/basic-memory; its README says how), read
 * as the tests need them, and what they hold.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { REPO_ROOT } from "./processes.js";

/** A basic-memory project folder written by basic-memory's own CLI. */
const BASIC_MEMORY_FOLDER = join(REPO_ROOT, "test/fixtures/basic-memory/atlas");
/** Its three notes hold 3 + 3 + 3 observations, prose in two of them and four relations. */
export const BASIC_MEMORY_RECORDS = { memories: 11, facts: 4 };

/** The fixture's notes as basic-memory import lines, in path order. */
export function basicMemoryNotes(): Array<{ path: string; content: string }> {
  return readdirSync(BASIC_MEMORY_FOLDER, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".md"))
    .map((e) => join(e.parentPath, e.name))
    .sort()
    .map((file) => ({ path: relative(BASIC_MEMORY_FOLDER, file).split(sep).join("/"), content: readFileSync(file, "utf8") }));
}
