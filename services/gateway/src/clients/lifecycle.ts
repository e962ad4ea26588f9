/**
 * Mappings for the memory service's lifecycle RPCs (revise, resolve, archive, history): public zod
 * shapes → proto requests, proto responses → public outputs parsed strictly. The MCP tools and the
 * REST routes both go through these, so the two surfaces cannot drift apart.
 */
import { AppError } from "@3ngram/errors";
import type { ArchiveResponse, GetHistoryResponse, MemoryService, ResolveResponse, ReviseResponse } from "@3ngram/proto/memory/v1";
import {
  archiveOutputSchema,
  historyOutputSchema,
  resolveOutputSchema,
  reviseOutputSchema,
  type ArchiveOutput,
  type HistoryOutput,
  type ResolveInput,
  type ResolveOutput,
  type ReviseInput,
  type ReviseOutput,
} from "@3ngram/schema";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { toCommitmentRecord, toFactRecord, toRecord, toRememberRequest } from "./memory.js";
import { isoTime } from "./timestamps.js";

type ReviseRequestInit = MessageInitShape<(typeof MemoryService)["method"]["revise"]["input"]>;
type ResolveRequestInit = MessageInitShape<(typeof MemoryService)["method"]["resolve"]["input"]>;

export function toReviseRequest(input: ReviseInput): ReviseRequestInit {
  const { predecessorId, edgeIntent, ...successor } = input;
  return { predecessorId, edgeIntent, successor: toRememberRequest(successor) };
}

export function toReviseOutput(response: ReviseResponse): ReviseOutput {
  const memory = response.memory;
  if (memory === undefined) throw new AppError("internal_error", "memory service returned no memory");
  return reviseOutputSchema.parse({
    memory: { id: memory.id, memoryType: memory.memoryType, topic: memory.topic, scope: memory.scope, project: memory.project ?? null },
    embedded: response.embedded,
    facts: response.facts.map(toFactRecord),
    ...(memory.commitment ? { commitment: toCommitmentRecord(memory.commitment) } : {}),
    predecessorId: response.predecessorId,
    edgeIntent: response.edgeIntent,
  });
}

export function toResolveRequest(input: ResolveInput): ResolveRequestInit {
  return { memoryId: input.memoryId, status: input.status };
}

export function toResolveOutput(response: ResolveResponse): ResolveOutput {
  return resolveOutputSchema.parse({
    memoryId: response.memoryId,
    commitmentId: response.commitmentId,
    status: response.status,
    previousStatus: response.previousStatus,
  });
}

export function toArchiveOutput(response: ArchiveResponse): ArchiveOutput {
  return archiveOutputSchema.parse({ id: response.id, status: response.status });
}

export function toHistoryOutput(response: GetHistoryResponse): HistoryOutput {
  return historyOutputSchema.parse({
    memoryId: response.memoryId,
    lifecycleState: response.lifecycleState,
    lineage: response.lineage.map(toRecord),
    edges: response.edges.map((e) => ({ fromId: e.fromId, toId: e.toId, edgeType: e.edgeType, recordedAt: isoTime(e.recordedAt, "recorded_at") })),
    events: response.events.map((e) => ({
      memoryId: e.memoryId,
      kind: e.kind,
      actor: e.actor,
      createdAt: isoTime(e.createdAt, "created_at"),
      payload: e.payloadJson === "" ? null : (JSON.parse(e.payloadJson) as Record<string, unknown>),
    })),
  });
}
