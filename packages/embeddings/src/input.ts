/** Inputs longer than this many characters are cut before embedding. */
export const DEFAULT_MAX_INPUT_CHARS = 8000;

/**
 * Prepares a text for an embedding model: empty or whitespace-only input becomes
 * a single space (models and APIs reject empty strings), and input longer than
 * `maxChars` is cut without splitting a UTF-16 surrogate pair.
 */
export function prepareText(text: string, maxChars: number = DEFAULT_MAX_INPUT_CHARS): string {
  if (text.trim() === "") return " ";
  if (text.length <= maxChars) return text;
  let end = maxChars;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

export function checkMaxInputChars(owner: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`${owner}: maxInputChars must be a positive integer, got ${value}`);
  }
  return value;
}

/**
 * The text a memory is embedded from: topic and content together, like the full-text index.
 * Shared by the inline path (memory service) and the retry job (consolidator) so they never drift.
 */
export function memoryEmbeddingText(memory: { topic: string; content: string }): string {
  return `${memory.topic}\n${memory.content}`;
}
