/**
 * Keys for records read from another server's file: built from that server's own names and ids,
 * so the same file imported again yields the same keys and stores nothing twice.
 */
import { createHash } from "node:crypto";
import { MAX_IMPORT_KEY_LENGTH } from "@3ngram/schema";

/** `%` and `:` are escaped inside key parts, so a name holding a colon cannot collide with another key. */
function keyPart(value: string): string {
  return value.replaceAll("%", "%25").replaceAll(":", "%3A");
}

/** The readable key when it fits the key bound, else a digest of it under the same prefix. */
export function boundedKey(prefix: string, parts: readonly string[]): string {
  const key = `${prefix}:${parts.map(keyPart).join(":")}`;
  if (key.length <= MAX_IMPORT_KEY_LENGTH) return key;
  return `${prefix}:sha256:${createHash("sha256").update(key).digest("hex")}`;
}
