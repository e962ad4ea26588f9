import { z } from "zod";
import { storableText } from "./storable-text.js";
import { outputObject } from "./open-object.js";

/** A key's name tells its owner what it is for ("laptop claude", "ci reader"). */
const MAX_API_KEY_NAME_LENGTH = 256;
/** Keys a person may hold unrevoked at once through self-service; an operator can issue more. */
export const MAX_LIVE_API_KEYS_PER_USER = 25;
/** The newest keys a listing shows, revoked ones included. */
export const MAX_LISTED_API_KEYS = 100;

export const apiKeyNameSchema = storableText().trim().min(1).max(MAX_API_KEY_NAME_LENGTH);

/** What a new key may do: read only, or read and write. */
const apiKeyAccessSchema = z.enum(["read", "read_write"]);

/** The keys page's create form. */
export const createApiKeyInputSchema = z.strictObject({ name: apiKeyNameSchema, access: apiKeyAccessSchema });

export const apiKeyIdSchema = z.uuid({ message: "must be a key id (UUID)" });

/** A key as its owner sees it: never the secret, never the hash. */
export const apiKeyRecordSchema = outputObject({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  scopes: z.array(z.string()),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
});
export type ApiKeyRecord = z.infer<typeof apiKeyRecordSchema>;
