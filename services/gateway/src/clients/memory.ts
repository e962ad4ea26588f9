/**
 * The memory service as the gateway sees it: a typed gRPC client plus the single mapping between
 * its proto messages and the public zod shapes. Outputs are parsed strictly with the shared
 * schemas, so a field the service grew but the public surface did not is caught here.
 */
import type { CredentialSigner, RpcClient } from "@3ngram/rpc";
import { createRpcClient } from "@3ngram/rpc";
import {
  MAX_IMPORT_BODY_BYTES,
  commitmentRecordSchema,
  factRecordSchema,
  getMemoriesOutputSchema,
  memoryRecordSchema,
  rememberOutputSchema,
  type CommitmentRecord,
  type FactRecord,
  type GetMemoriesInput,
  type GetMemoriesOutput,
  type MemoryRecord,
  type RememberInput,
  type RememberOutput,
} from "@3ngram/schema";
import { AppError } from "@3ngram/errors";
import { MemoryService, type Commitment, type Fact, type GetMemoriesResponse, type Memory, type RememberResponse } from "@3ngram/proto/memory/v1";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { isoTime, isoTimeOrNull, timestampFromIso } from "./timestamps.js";

export type MemoryClient = RpcClient<typeof MemoryService>;

export function createMemoryClient(address: string, signer: CredentialSigner): MemoryClient {
  return createRpcClient(MemoryService, {
    address,
    audience: "memory",
    signer,
    // Import sends a whole NDJSON file and answers one result per record; export pages are large too.
    maxSendMessageBytes: MAX_IMPORT_BODY_BYTES + 1024 * 1024,
    maxReceiveMessageBytes: 64 * 1024 * 1024,
  });
}

type RememberRequestInit = MessageInitShape<(typeof MemoryService)["method"]["remember"]["input"]>;
type GetMemoriesRequestInit = MessageInitShape<(typeof MemoryService)["method"]["getMemories"]["input"]>;

/** The memory fields remember and revise share → the wire. Absent optional fields stay absent. */
export function toRememberRequest(input: RememberInput): RememberRequestInit {
  return {
    memoryType: input.memoryType,
    topic: input.topic,
    content: input.content,
    ...(input.scope !== undefined ? { scope: input.scope } : {}),
    ...(input.project !== undefined ? { project: input.project } : {}),
    tags: input.tags,
    ...(input.dueAt !== undefined ? { dueAt: timestampFromIso(input.dueAt) } : {}),
    ...(input.owner !== undefined ? { owner: input.owner } : {}),
    ...(input.idempotencyKey !== undefined ? { idempotencyKey: input.idempotencyKey } : {}),
    facts: input.facts.map((f) => ({
      subject: f.subject,
      predicate: f.predicate,
      value: f.value,
      ...(f.confidence !== undefined ? { confidence: f.confidence } : {}),
      ...(f.validFrom !== undefined ? { validFrom: timestampFromIso(f.validFrom) } : {}),
    })),
  };
}

export function toGetMemoriesRequest(input: GetMemoriesInput): GetMemoriesRequestInit {
  return { ids: input.ids, maxContentChars: input.maxContentChars };
}

/** One stored memory → the public record. */
export function toRecord(memory: Memory): MemoryRecord {
  return memoryRecordSchema.parse({
    id: memory.id,
    memoryType: memory.memoryType,
    topic: memory.topic,
    content: memory.content,
    contentLength: memory.contentLength,
    truncated: memory.truncated,
    scope: memory.scope,
    project: memory.project ?? null,
    status: memory.status,
    tags: memory.tags,
    validFrom: isoTime(memory.validFrom, "valid_from"),
    validTo: isoTimeOrNull(memory.validTo),
    recordedAt: isoTime(memory.recordedAt, "recorded_at"),
    embedded: memory.embeddingState,
    supersededBy: memory.supersededBy ?? null,
    commitment: memory.commitment ? toCommitmentRecord(memory.commitment) : null,
    ...(memory.erasedAt ? { erasedAt: isoTime(memory.erasedAt, "erased_at") } : {}),
  });
}

export function toCommitmentRecord(commitment: Commitment): CommitmentRecord {
  return commitmentRecordSchema.parse({
    id: commitment.id,
    status: commitment.status,
    dueAt: isoTimeOrNull(commitment.dueAt),
    owner: commitment.owner ?? null,
  });
}

export function toFactRecord(fact: Fact): FactRecord {
  return factRecordSchema.parse({
    id: fact.id,
    subject: fact.subject,
    predicate: fact.predicate,
    value: fact.value,
    confidence: fact.confidence ?? null,
    validFrom: isoTime(fact.validFrom, "valid_from"),
    validTo: isoTimeOrNull(fact.validTo),
    recordedAt: isoTime(fact.recordedAt, "recorded_at"),
    memoryId: fact.memoryId ?? null,
  });
}

export function toRememberOutput(response: RememberResponse): RememberOutput {
  const memory = response.memory;
  if (memory === undefined) throw new AppError("internal_error", "memory service returned no memory");
  return rememberOutputSchema.parse({
    memory: {
      id: memory.id,
      memoryType: memory.memoryType,
      topic: memory.topic,
      scope: memory.scope,
      project: memory.project ?? null,
    },
    embedded: response.embedded,
    facts: response.facts.map(toFactRecord),
    ...(memory.commitment ? { commitment: toCommitmentRecord(memory.commitment) } : {}),
  });
}

export function toGetMemoriesOutput(response: GetMemoriesResponse): GetMemoriesOutput {
  const memories = response.memories.map(toRecord);
  return getMemoriesOutputSchema.parse({ memories, count: memories.length, notFound: response.notFound });
}
