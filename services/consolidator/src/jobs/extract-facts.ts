/**
 * Fact extraction for one new memory. The memory service queues this job after remember, revise
 * and import commit; here the memory is read back, the configured extractor runs over it, and what
 * it finds is handed back as fact proposals (the memory service stays the only writer). Nothing
 * becomes a fact until a person accepts the proposal.
 *
 * Idempotent: a claim already proposed for the memory is skipped by the memory service, so a retry,
 * a duplicate job or a job taken over from a killed worker proposes nothing twice.
 */
import { isAppError } from "@3ngram/errors";
import { SCOPES } from "@3ngram/rpc";
import type { Logger } from "@3ngram/runtime";
import { EXTRACT_FACTS_JOB, MAX_FACT_PROPOSALS_PER_MEMORY, extractFactsJobSchema } from "@3ngram/schema";
import type { FactExtractor } from "../extraction/index.js";
import { callPeer, parsePayload } from "./peer.js";
import type { ConsolidatorMemory } from "../peers.js";

export { EXTRACT_FACTS_JOB };

export interface ExtractFactsDeps {
  memory: Pick<ConsolidatorMemory, "memories" | "proposals">;
  extractor: FactExtractor;
  log: Logger;
}

export type ExtractFactsOutcome = "proposed" | "already_proposed" | "no_facts" | "not_found";

/** Memories are at most 2 000 characters through the tools; imports may be longer and are read up to this. */
const MAX_CONTENT_CHARS = 8000;

export async function extractFactsFromMemory(payload: unknown, deps: ExtractFactsDeps): Promise<ExtractFactsOutcome> {
  const { tenantId, memoryId: rawId } = parsePayload(EXTRACT_FACTS_JOB, extractFactsJobSchema, payload);
  const memoryId = rawId.toLowerCase();
  const { memory, extractor, log } = deps;
  const identity = { tenantId, scopes: [SCOPES.read, SCOPES.internalConsolidate] };

  const found = await callPeer("memory", () => memory.memories.getMemories({ ids: [memoryId], maxContentChars: MAX_CONTENT_CHARS }, { identity }));
  const record = found.memories.find((m) => m.id === memoryId);
  if (!record) {
    // Unknown or another tenant's: the memory service answers both alike, and retrying changes nothing.
    log.info({ memoryId }, "memory not found; nothing to extract");
    return "not_found";
  }
  const facts = (await extractor.extract({ memoryType: record.memoryType, topic: record.topic, content: record.content })).slice(
    0,
    MAX_FACT_PROPOSALS_PER_MEMORY,
  );
  if (facts.length === 0) {
    log.debug({ memoryId }, "no facts found");
    return "no_facts";
  }
  try {
    const stored = await callPeer("memory", () =>
      memory.proposals.createFactProposals(
        {
          memoryId,
          extractor: extractor.name,
          facts: facts.map((f) => ({ subject: f.subject, predicate: f.predicate, value: f.value, confidence: f.confidence, rationale: f.rationale })),
        },
        { identity },
      ),
    );
    log.info({ memoryId, extractor: extractor.name, found: facts.length, proposed: stored.createdIds.length, skipped: stored.skipped }, "facts proposed");
    return stored.createdIds.length > 0 ? "proposed" : "already_proposed";
  } catch (err) {
    if (isAppError(err) && err.reason === "not_found") {
      log.info({ memoryId }, "memory gone before its facts were proposed");
      return "not_found";
    }
    throw err;
  }
}
