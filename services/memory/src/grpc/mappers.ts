import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { CommitmentSchema, FactSchema, MemorySchema, type RememberRequest } from "@3ngram/proto/memory/v1";
import type { CallContext } from "@3ngram/rpc";
import { cutText } from "@3ngram/schema";
import type { FactRow } from "../db/facts.js";
import type { CommitmentRow, MemoryRow } from "../db/memories.js";
import type { Actor } from "../domain/deps.js";

const ACTOR_KINDS = new Set<Actor["kind"]>(["user_mcp", "user_api", "worker", "importer", "system"]);

/** Who is calling, for the domain: the verified tenant and user, and the surface for audit events. */
export function actorOf(ctx: CallContext): Actor {
  const claimed = ctx.caller.actor as Actor["kind"] | undefined;
  const kind = claimed && ACTOR_KINDS.has(claimed) ? claimed : ctx.caller.issuer === "consolidator" ? "worker" : "system";
  return { tenantId: ctx.tenantId, userId: ctx.userId, kind };
}

/** The one domain → wire mapping for a memory. */
export function toProtoMemory(row: MemoryRow, maxContentChars: number): MessageInitShape<typeof MemorySchema> {
  const content = cutText(row.content, maxContentChars);
  return {
    id: row.id,
    memoryType: row.memoryType,
    topic: row.topic,
    content: content.text,
    contentLength: content.contentLength,
    truncated: content.truncated,
    scope: row.scope,
    ...(row.project !== null ? { project: row.project } : {}),
    tags: row.tags,
    status: row.status,
    validFrom: timestampFromDate(row.validFrom),
    ...(row.validTo ? { validTo: timestampFromDate(row.validTo) } : {}),
    recordedAt: timestampFromDate(row.recordedAt),
    embeddingState: row.embedded ? "done" : "pending",
    ...(row.supersededBy ? { supersededBy: row.supersededBy } : {}),
    ...(row.commitment ? { commitment: toProtoCommitment(row.commitment) } : {}),
    ...(row.erasedAt ? { erasedAt: timestampFromDate(row.erasedAt) } : {}),
  };
}

function toProtoCommitment(row: CommitmentRow): MessageInitShape<typeof CommitmentSchema> {
  return {
    id: row.id,
    status: row.status,
    ...(row.owner !== null ? { owner: row.owner } : {}),
    ...(row.dueAt ? { dueAt: timestampFromDate(row.dueAt) } : {}),
    ...(row.resolvedAt ? { resolvedAt: timestampFromDate(row.resolvedAt) } : {}),
  };
}

export function toProtoFact(row: FactRow): MessageInitShape<typeof FactSchema> {
  return {
    id: row.id,
    subject: row.subject,
    predicate: row.predicate,
    value: row.value,
    ...(row.confidence !== null ? { confidence: row.confidence } : {}),
    validFrom: timestampFromDate(row.validFrom),
    ...(row.validTo ? { validTo: timestampFromDate(row.validTo) } : {}),
    recordedAt: timestampFromDate(row.recordedAt),
    ...(row.memoryId ? { memoryId: row.memoryId } : {}),
  };
}

/** A wire timestamp → ISO string for the zod schemas (which validate instants as strings). */
export function isoFromTimestamp(ts: Timestamp | undefined): string | undefined {
  return ts ? timestampDate(ts).toISOString() : undefined;
}

/** proto RememberRequest → the plain object the shared zod schema validates (absent stays absent). */
export function rememberFieldsFromProto(request: RememberRequest): Record<string, unknown> {
  return {
    memoryType: request.memoryType,
    topic: request.topic,
    content: request.content,
    // proto3 has no "absent" for strings: empty means "not given".
    ...(request.scope !== "" ? { scope: request.scope } : {}),
    ...(request.project !== undefined ? { project: request.project } : {}),
    tags: request.tags,
    ...(request.dueAt ? { dueAt: isoFromTimestamp(request.dueAt) } : {}),
    ...(request.owner !== undefined ? { owner: request.owner } : {}),
    ...(request.idempotencyKey !== undefined ? { idempotencyKey: request.idempotencyKey } : {}),
    facts: request.facts.map((f) => ({
      subject: f.subject,
      predicate: f.predicate,
      value: f.value,
      ...(f.confidence !== undefined ? { confidence: f.confidence } : {}),
      ...(f.validFrom ? { validFrom: isoFromTimestamp(f.validFrom) } : {}),
    })),
  };
}
