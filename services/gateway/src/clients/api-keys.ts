/** The memory service's self-service key RPCs → the public key record (never the secret or its hash). */
import type { MemoryService } from "@3ngram/proto/memory/v1";
import type { ResponseOf } from "@3ngram/rpc";
import { apiKeyRecordSchema, type ApiKeyRecord } from "@3ngram/schema";
import { isoTime, isoTimeOrNull } from "./timestamps.js";

type ApiKey = ResponseOf<typeof MemoryService, "listMyApiKeys">["keys"][number];

export function toApiKeyRecord(key: ApiKey): ApiKeyRecord {
  return apiKeyRecordSchema.parse({
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    scopes: key.scopes,
    createdAt: isoTime(key.createdAt, "created_at"),
    lastUsedAt: isoTimeOrNull(key.lastUsedAt),
    revokedAt: isoTimeOrNull(key.revokedAt),
  });
}
