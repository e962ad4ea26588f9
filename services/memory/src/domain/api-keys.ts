import { createHash, randomBytes } from "node:crypto";
import { apiKeyNameSchema, parseInput } from "@3ngram/schema";
import { z } from "zod";

/**
 * API keys look like `3ng_<prefix>_<secret>`: the prefix (8 chars) is stored in clear so an owner
 * can tell keys apart; only the sha256 of the whole key is stored, so a database leak does not
 * leak usable keys. 32 random bytes of secret make brute force pointless, so a fast hash is fine.
 */
const KEY_PATTERN = /^3ng_([A-Za-z0-9_-]{8})_([A-Za-z0-9_-]{43})$/;

export interface GeneratedApiKey {
  key: string;
  prefix: string;
  hash: string;
}

export function generateApiKey(): GeneratedApiKey {
  const prefix = randomBytes(6).toString("base64url");
  const secret = randomBytes(32).toString("base64url");
  const key = `3ng_${prefix}_${secret}`;
  return { key, prefix, hash: sha256Hex(key) };
}

/** Hex SHA-256: how keys, OAuth codes, refresh tokens and client secrets are stored (all high-entropy, so a fast hash suffices). */
export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

export function looksLikeApiKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

const keyNameInput = z.strictObject({ name: apiKeyNameSchema });

/** A key's name, trimmed and bounded; a bad one is invalid_input naming `name`. */
export function parseKeyName(name: string): string {
  return parseInput(keyNameInput, { name }).name;
}
