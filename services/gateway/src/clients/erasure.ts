/**
 * erase ↔ memory.Erase: the one mapping between the public erasure shapes and the wire. Absent
 * optional fields stay absent; the answer is parsed strictly with the shared schema.
 */
import type { MemoryService } from "@3ngram/proto/memory/v1";
import type { MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { eraseOutputSchema, type EraseInput, type EraseOutput } from "@3ngram/schema";

type EraseRequestInit = MessageInitShape<(typeof MemoryService)["method"]["erase"]["input"]>;
type EraseResponse = MessageShape<(typeof MemoryService)["method"]["erase"]["output"]>;

export function toEraseRequest(input: EraseInput): EraseRequestInit {
  return {
    ids: input.ids ?? [],
    // The parsed selector holds only the fields given, each an optional string on the wire too.
    ...(input.selector !== undefined ? { selector: input.selector } : {}),
    reason: input.reason,
    ...(input.reference !== undefined ? { reference: input.reference } : {}),
    dryRun: input.dryRun,
  };
}

export function toEraseOutput(response: EraseResponse): EraseOutput {
  return eraseOutputSchema.parse({
    erasureId: response.erasureId ?? null,
    dryRun: response.dryRun,
    erased: response.erased,
    alreadyErased: response.alreadyErased,
    notFound: response.notFound,
    factsErased: response.factsErased,
    remaining: response.remaining,
  });
}
