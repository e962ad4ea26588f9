/**
 * One sample per RPC for the bridge round-trip test: a request as its caller sends it and a
 * response as the service's domain answers it, in the public shapes. Each sample sets every field
 * its messages have (the test checks), so a proto field the public shape lacks cannot hide.
 */
const ID = "0190c0de-0000-7000-8000-000000000001";
const ID2 = "0190c0de-0000-7000-8000-000000000002";
// Whole seconds on purpose: protobuf JSON prints these without a fraction, the bridge must not.
const T0 = "2026-01-31T09:00:00.000Z";
const T1 = "2026-02-01T10:11:12.345Z";

const factInput = { subject: "user", predicate: "top_set.weight_kg", value: "100", confidence: 0.9, validFrom: T0 };
const fact = {
  id: ID2,
  subject: "user",
  predicate: "top_set.weight_kg",
  value: "100",
  confidence: 0.9,
  validFrom: T0,
  validTo: T1,
  recordedAt: T1,
  memoryId: ID,
};
const commitment = { id: ID2, status: "open", dueAt: T1, owner: "ana" };
const memoryFields = {
  memoryType: "commitment",
  topic: "ship it",
  content: "Ship the release on Friday.",
  scope: "work",
  project: "atlas",
  tags: ["release"],
  dueAt: T1,
  owner: "ana",
  facts: [factInput],
  idempotencyKey: "key-1",
};
const memoryRef = { id: ID, memoryType: "commitment", topic: "ship it", scope: "work", project: "atlas" };
const memoryRecord = {
  id: ID,
  memoryType: "commitment",
  topic: "ship it",
  content: "Ship the release",
  contentLength: 27,
  truncated: true,
  scope: "work",
  project: "atlas",
  recordedAt: T0,
  status: "active",
  tags: ["release"],
  validFrom: T0,
  validTo: T1,
  embedded: "done",
  supersededBy: ID2,
  commitment,
  erasedAt: T1,
};

/** A request and a response; `more` adds requests for fields one request cannot hold together. */
export interface Sample {
  request: unknown;
  response: unknown;
  more?: unknown[];
}

const scope = { id: ID, name: "work", aliases: ["job"], projects: ["atlas"], createdAt: T0 };
const policy = { mode: "default", scope: "work" };

export const memorySamples: Record<string, Sample> = {
  remember: { request: memoryFields, response: { memory: memoryRef, embedded: "pending", facts: [fact], commitment } },
  getMemories: { request: { ids: [ID], maxContentChars: 1000 }, response: { memories: [memoryRecord], count: 1, notFound: [ID2] } },
  revise: {
    request: { ...memoryFields, predecessorId: ID2, edgeIntent: "updates" },
    response: { memory: memoryRef, embedded: "done", facts: [fact], commitment, predecessorId: ID2, edgeIntent: "updates" },
  },
  resolve: { request: { memoryId: ID, status: "resolved" }, response: { memoryId: ID, commitmentId: ID2, status: "resolved", previousStatus: "open" } },
  archive: { request: { memoryId: ID }, response: { id: ID, status: "archived" } },
  getHistory: {
    request: { memoryId: ID },
    response: {
      memoryId: ID,
      lifecycleState: "superseded",
      lineage: [memoryRecord],
      edges: [{ fromId: ID2, toId: ID, edgeType: "supersedes", recordedAt: T1 }],
      events: [{ memoryId: ID, kind: "create", actor: "user_mcp", createdAt: T0, payload: { contentLength: 27, nested: { ok: true } } }],
    },
  },
  getFacts: {
    request: { subject: "user", predicate: "top_set.weight_kg", asOf: { validAt: T0, asKnownAt: T1 }, limit: 5 },
    response: { facts: [fact], count: 1 },
    more: [{ subject: "user", range: { from: T0, to: T1 } }],
  },
  listMemories: {
    request: { type: "decision", scope: "work", project: ["atlas"], status: "active", recordedAfter: T0, recordedBefore: T1, limit: 10, offset: 5 },
    more: [{ memoryTypes: ["decision", "note"] }],
    response: {
      memories: [
        {
          id: ID,
          memoryType: "commitment",
          topic: "ship it",
          scope: "work",
          project: "atlas",
          status: "active",
          tags: ["x"],
          recordedAt: T0,
          supersededBy: ID2,
          commitment,
        },
      ],
      count: 1,
      total: 7,
    },
  },
  getFacets: { request: {}, response: { scopes: ["personal", "work"], projects: ["atlas"] } },
  listScopes: { request: {}, response: { scopes: [scope], count: 1, policy } },
  createScope: { request: { name: "work", aliases: ["job"] }, response: { scope } },
  renameScope: { request: { name: "work", newName: "job" }, response: { scope } },
  setScopeAliases: { request: { name: "work", aliases: ["job"] }, response: { scope } },
  setScopeMappings: { request: { name: "work", projects: ["atlas"] }, response: { scope } },
  deleteScope: { request: { name: "work" }, response: { name: "work", policy } },
  setRetrievalDefault: { request: { mode: "default", scope: "work" }, response: { policy } },
  readMemory: {
    request: { id: ID },
    response: { id: ID, memoryType: "note", topic: "long", content: "whole text", contentLength: 10, scope: "work", project: "atlas", recordedAt: T0 },
  },
};

const coverage = {
  order: "relevance",
  legs: [{ leg: "vector", available: true, candidates: 12 }],
  filters: { memoryTypes: ["decision"], scope: "work", projects: ["atlas"], status: "active", recordedAfter: T0, recordedBefore: T1 },
  appliedScope: "work",
  asOf: { validAt: T0, asKnownAt: T1 },
  poolSize: 12,
  hasMore: true,
  abstained: true,
  evidence: { bestCosine: 0.8, anyLexical: true, scoreGap: 0.1, termCoverage: 1 },
};
const fullHit = {
  id: ID,
  memoryType: "decision",
  topic: "db",
  content: "We use PostgreSQL",
  contentLength: 17,
  truncated: false,
  score: 0.9,
  scope: "work",
  project: "atlas",
  recordedAt: T0,
};

export const searchSamples: Record<string, Sample> = {
  search: {
    request: {
      query: "database",
      limit: 5,
      memoryTypes: ["decision"],
      scope: "work",
      projects: ["atlas"],
      status: "active",
      recordedAfter: T0,
      recordedBefore: T1,
      asOf: { validAt: T0, asKnownAt: T1 },
      order: "relevance",
      cursor: "opaque",
      projection: "full",
    },
    more: [{ query: "database", memoryType: "decision", project: "atlas" }],
    response: { hits: [fullHit], count: 1, hasMore: true, nextCursor: "next", appliedScope: "work", coverage },
  },
  similarPairs: {
    request: { limit: 10 },
    response: {
      pairs: [{ newerId: ID, olderId: ID2, newerType: "decision", olderType: "decision", similarity: 0.95, band: "near_duplicate", threshold: 0.92 }],
      scanned: 40,
      model: "m",
    },
  },
};

/** A compact search page: hits with id, type, topic and score only. */
export const compactSearchResponse = {
  hits: [{ id: ID, memoryType: "decision", topic: "db", score: 0.9 }],
  count: 1,
  hasMore: false,
  coverage: { ...coverage, appliedScope: null, asOf: null, poolSize: null, hasMore: false },
};
