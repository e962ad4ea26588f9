import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { MemorySchema } from "@3ngram/proto/memory/v1";
import { toWire, type CallContext } from "@3ngram/rpc";
import type { MemoryRow } from "../db/memories.js";
import type { Actor } from "../domain/deps.js";
import { memoryRecord } from "../domain/records.js";

const ACTOR_KINDS = new Set<Actor["kind"]>(["user_mcp", "user_api", "worker", "importer", "system"]);

/** Who is calling, for the domain: the verified tenant and user, and the surface for audit events. */
export function actorOf(ctx: CallContext): Actor {
  const claimed = ctx.caller.actor as Actor["kind"] | undefined;
  const kind = claimed && ACTOR_KINDS.has(claimed) ? claimed : ctx.caller.issuer === "consolidator" ? "worker" : "system";
  return { tenantId: ctx.tenantId, userId: ctx.userId, kind };
}

/** A memory row as its wire message (for the RPCs not yet answering with public shapes). */
export function toProtoMemory(row: MemoryRow, maxContentChars: number) {
  return toWire(MemorySchema, memoryRecord(row, maxContentChars));
}

/** A wire timestamp → ISO string for the zod schemas (which validate instants as strings). */
export function isoFromTimestamp(ts: Timestamp | undefined): string | undefined {
  return ts ? timestampDate(ts).toISOString() : undefined;
}
