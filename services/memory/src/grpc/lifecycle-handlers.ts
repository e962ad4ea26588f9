import type { MemoryService } from "@3ngram/proto/memory/v1";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { SCOPES, type Handlers, type Policies } from "@3ngram/rpc";
import { DEFAULT_GET_CONTENT_CHARS, MAX_CONTENT_LENGTH, parseInput, resolveInputSchema, reviseInputSchema } from "@3ngram/schema";
import { archive } from "../domain/archive.js";
import type { MemoryDeps } from "../domain/deps.js";
import { getHistory } from "../domain/history.js";
import { resolve } from "../domain/resolve.js";
import { revise } from "../domain/revise.js";
import { actorOf, rememberFieldsFromProto, toProtoFact, toProtoMemory } from "./mappers.js";

// Supersession, the commitment state machine, archive and history.
type LifecycleMethods = "revise" | "resolve" | "archive" | "getHistory";

/** Archive and history take a memory id alone: validated as resolve validates its memoryId. */
const memoryIdInputSchema = resolveInputSchema.pick({ memoryId: true });

/** History shows each lineage member whole as a tool wrote it; longer imported text is cut. */
const HISTORY_CONTENT_CHARS = MAX_CONTENT_LENGTH;

export function lifecycleHandlers(deps: MemoryDeps): Pick<Handlers<typeof MemoryService>, LifecycleMethods> {
  return {
    async revise(request, ctx) {
      const input = parseInput(reviseInputSchema, {
        ...(request.successor ? rememberFieldsFromProto(request.successor) : {}),
        predecessorId: request.predecessorId,
        // proto3 has no "absent" for strings: empty means the default (supersedes).
        ...(request.edgeIntent !== "" ? { edgeIntent: request.edgeIntent } : {}),
      });
      const result = await revise(deps, actorOf(ctx), input);
      return {
        memory: toProtoMemory(result.memory, DEFAULT_GET_CONTENT_CHARS),
        embedded: result.embedded,
        facts: result.facts.map(toProtoFact),
        predecessorId: result.predecessorId,
        edgeIntent: result.edgeIntent,
      };
    },

    async resolve(request, ctx) {
      const input = parseInput(resolveInputSchema, { memoryId: request.memoryId, status: request.status });
      return resolve(deps, actorOf(ctx), input);
    },

    async archive(request, ctx) {
      const input = parseInput(memoryIdInputSchema, { memoryId: request.memoryId });
      return archive(deps, actorOf(ctx), input);
    },

    async getHistory(request, ctx) {
      const input = parseInput(memoryIdInputSchema, { memoryId: request.memoryId });
      const history = await getHistory(deps, actorOf(ctx), input);
      return {
        memoryId: history.memoryId,
        lifecycleState: history.lifecycleState,
        lineage: history.lineage.map((m) => toProtoMemory(m, HISTORY_CONTENT_CHARS)),
        edges: history.edges.map((e) => ({ fromId: e.fromId, toId: e.toId, edgeType: e.edgeType, recordedAt: timestampFromDate(e.recordedAt) })),
        events: history.events.map((e) => ({
          memoryId: e.memoryId,
          kind: e.kind,
          actor: e.actor,
          createdAt: timestampFromDate(e.createdAt),
          payloadJson: e.payload === null ? "" : JSON.stringify(e.payload),
        })),
      };
    },
  };
}

export const lifecyclePolicies: Pick<Policies<typeof MemoryService>, LifecycleMethods> = {
  revise: { anyScope: [SCOPES.write], tenant: true },
  resolve: { anyScope: [SCOPES.write], tenant: true },
  archive: { anyScope: [SCOPES.write], tenant: true },
  getHistory: { anyScope: [SCOPES.read], tenant: true },
};
