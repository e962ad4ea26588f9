/**
 * The memory service as the gateway sees it: a typed gRPC client plus the single mapping between
 * its proto messages and the public zod shapes. Outputs are parsed strictly with the shared
 * schemas, so a field the service grew but the public surface did not is caught here.
 */
import type { CredentialSigner, RpcClient } from "@3ngram/rpc";
import { createRpcClient } from "@3ngram/rpc";
import {
  getMemoriesOutputSchema,
  memoryRecordSchema,
  rememberOutputSchema,
  type GetMemoriesInput,
  type GetMemoriesOutput,
  type MemoryRecord,
  type RememberInput,
  type RememberOutput,
} from "@3ngram/schema";
import { AppError } from "@3ngram/errors";
import { MemoryService, type GetMemoriesResponse, type Memory, type RememberResponse } from "@3ngram/proto/memory/v1";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { isoTime, isoTimeOrNull } from "./timestamps.js";

export type MemoryClient = RpcClient<typeof MemoryService>;

export function createMemoryClient(address: string, signer: CredentialSigner): MemoryClient {
  return createRpcClient(MemoryService, { address, audience: "memory", signer });
}

type RememberRequestInit = MessageInitShape<(typeof MemoryService)["method"]["remember"]["input"]>;
type GetMemoriesRequestInit = MessageInitShape<(typeof MemoryService)["method"]["getMemories"]["input"]>;

export function toRememberRequest(input: RememberInput): RememberRequestInit {
  return {
    memoryType: input.memoryType,
    topic: input.topic,
    content: input.content,
    scope: input.scope,
    ...(input.project !== undefined ? { project: input.project } : {}),
    tags: input.tags,
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
  });
}

export function toGetMemoriesOutput(response: GetMemoriesResponse): GetMemoriesOutput {
  const memories = response.memories.map(toRecord);
  return getMemoriesOutputSchema.parse({ memories, count: memories.length, notFound: response.notFound });
}
