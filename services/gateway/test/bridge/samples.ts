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
  validFrom: T0,
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

/**
 * A request and a response; `more` adds requests and `moreResponses` responses for fields one
 * message cannot hold together (the members of a oneof).
 */
export interface Sample {
  request: unknown;
  response: unknown;
  more?: unknown[];
  moreResponses?: unknown[];
}

const scope = { id: ID, name: "work", aliases: ["job"], projects: ["atlas"], createdAt: T0 };
const policy = { mode: "default", scope: "work" };

const edgeProposal = {
  id: ID,
  fromId: ID,
  toId: ID2,
  edgeType: "supersedes",
  memoryType: "decision",
  fromTopic: "db",
  toTopic: "db",
  similarity: 0.95,
  rationale: "same decision",
  status: "rejected",
  decidedAt: T1,
  decisionRationale: "not the same",
  createdAt: T0,
};
const factProposal = {
  id: ID2,
  memoryId: ID,
  subject: "user",
  predicate: "distance_km",
  value: "5",
  confidence: 0.7,
  extractor: "rules/1",
  rationale: "said so",
  status: "applied",
  decidedAt: T1,
  decisionRationale: "yes",
  factId: ID,
  createdAt: T0,
};

const apiKey = { id: ID, name: "laptop", prefix: "abcdefgh", scopes: ["memory:read"], createdAt: T0, lastUsedAt: T1, revokedAt: T1 };

const oauthClient = { clientId: "c1", registration: "dynamic", tokenEndpointAuthMethod: "none", metadataJson: '{"client_name":"x"}', createdAt: T0 };
const grant = { tenantId: ID, userId: ID2, clientId: "c1", scopes: ["memory:read"], resource: "https://m.example/mcp", refreshToken: "r" };

const changes = { new: 1, superseded: 2, resolved: 3, expired: 4, archived: 5, erased: 6 };
const briefingCommitment = { id: ID2, memoryId: ID, topic: "ship", status: "open", dueAt: T1, owner: "ana", overdue: true, change: "new", supersededBy: ID2 };
const briefingMemory = {
  id: ID,
  memoryType: "decision",
  topic: "db",
  scope: "work",
  project: "atlas",
  recordedAt: T0,
  change: "superseded",
  supersededBy: ID2,
};
const commitmentSection = { count: 3, items: [briefingCommitment], hasMore: true, changes };
const memorySection = { count: 3, items: [briefingMemory], hasMore: true, changes };
const handoffMemory = { ...briefingMemory, content: "We use PostgreSQL", contentLength: 17, truncated: true };
const handoffCommitment = { ...briefingCommitment, content: "Ship it", contentLength: 7, truncated: true, scope: "work", project: "atlas" };
const perHandoffSection = <T>(value: T) => ({ decisions: value, commitments: value, preferences: value, blockers: value });
const selector = { kind: "scope_project", scope: "work", project: "atlas", includeUnscoped: true };
/** Every other kind of the selector oneof, each with its own fields. */
const otherSelectors = [{ kind: "all" }, { kind: "scope", scope: "work" }, { kind: "project", project: "atlas" }];

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
  createConsolidationProposals: {
    request: { proposals: [{ fromId: ID, toId: ID2, edgeType: "updates", similarity: 0.9, rationale: "close" }] },
    response: { createdIds: [ID], skipped: 2 },
  },
  createFactProposals: {
    request: { memoryId: ID, extractor: "rules/1", facts: [{ subject: "user", predicate: "distance_km", value: "5", confidence: 0.7, rationale: "said so" }] },
    response: { createdIds: [ID2], skipped: 1 },
  },
  listProposals: { request: { status: "applied", limit: 10 }, response: { proposals: [edgeProposal], count: 1, factProposals: [factProposal] } },
  getProposal: { request: { proposalId: ID }, response: { edge: edgeProposal, fact: factProposal } },
  acceptProposal: { request: { proposalId: ID }, response: { edge: edgeProposal, fact: factProposal } },
  rejectProposal: { request: { proposalId: ID, rationale: "no" }, response: { edge: edgeProposal, fact: factProposal } },
  listMyApiKeys: { request: {}, response: { keys: [apiKey] } },
  createMyApiKey: { request: { name: "laptop", scopes: ["memory:read"] }, response: { key: apiKey, apiKey: "3ng_secret" } },
  revokeMyApiKey: { request: { keyId: ID }, response: { key: apiKey } },
  // Vector components a 32-bit float holds exactly, as the wire carries them.
  storeEmbedding: { request: { memoryId: ID, model: "hash-384", vector: [0.5, -0.25, 1] }, response: { stored: true } },
  resolveApiKey: { request: { apiKey: "3ng_secret" }, response: { tenantId: ID, userId: ID2, scopes: ["memory:read"], keyId: ID } },
  checkTenantMembership: { request: { userId: ID2 }, response: { member: true } },
  listTenants: { request: { after: ID, limit: 10 }, response: { tenantIds: [ID2] } },
  listPendingEmbeddings: { request: { model: "hash-384", after: ID, limit: 10 }, response: { memoryIds: [ID2] } },
  expireCommitments: { request: { dueBefore: T0, limit: 10 }, response: { memoryIds: [ID], skipped: 1 } },
  registerOAuthClient: { request: { metadataJson: '{"client_name":"x"}' }, response: { client: oauthClient, clientSecret: "s3cret" } },
  saveMetadataDocumentClient: { request: { clientId: "https://c.example/doc", metadataJson: "{}" }, response: { client: oauthClient } },
  getOAuthClient: { request: { clientId: "c1" }, response: { client: oauthClient } },
  createAuthorizationCode: {
    request: { clientId: "c1", redirectUri: "https://c.example/cb", codeChallenge: "a".repeat(43), scopes: ["memory:read"], resource: "https://m.example/mcp" },
    response: { code: "code", expiresAt: T1 },
  },
  redeemAuthorizationCode: {
    request: { code: "code", clientId: "c1", clientSecret: "s3cret", redirectUri: "https://c.example/cb", codeVerifier: "v".repeat(43) },
    response: { grant },
  },
  refreshOAuthGrant: { request: { refreshToken: "r", clientId: "c1", clientSecret: "s3cret", scopes: ["memory:read"] }, response: { grant } },
  revokeOAuthToken: { request: { token: "t", clientId: "c1", clientSecret: "s3cret" }, response: {} },
  getSigningKeys: { request: {}, response: { keys: [{ kid: "k1", alg: "EdDSA", publicJwkJson: "{}", privateJwkJson: "{}", active: true }] } },
  collectOAuthGarbage: { request: { clientIdleDays: 30 }, response: { clientsRemoved: 1, codesRemoved: 2, tokensRemoved: 3, keysRemoved: 4 } },
  briefing: {
    request: { selector, mode: "full", sections: ["commitments", "blockers"], sectionLimit: 5, since: "cursor" },
    more: otherSelectors.map((s) => ({ selector: s })),
    moreResponses: otherSelectors.map((s) => ({ selector: s, mode: "brief", sectionLimit: 3, generatedAt: T0, changesCursor: "c" })),
    response: {
      selector,
      mode: "full",
      sectionLimit: 5,
      generatedAt: T1,
      appliedScope: "work",
      changesCursor: "next",
      changesSince: T0,
      commitments: commitmentSection,
      overdue: commitmentSection,
      blockers: memorySection,
      staleCandidates: memorySection,
      recentDecisions: memorySection,
      preferences: memorySection,
    },
  },
  handoff: {
    request: { selector, generatedFor: "the next agent", sectionLimit: 5, since: "cursor" },
    more: otherSelectors.map((s) => ({ selector: s })),
    moreResponses: otherSelectors.map((s) => ({
      selector: s,
      generatedFor: null,
      generatedAt: T0,
      sectionLimit: 25,
      changesCursor: "c",
      decisions: [],
      commitments: [],
      preferences: [],
      blockers: [],
      counts: perHandoffSection(0),
      truncated: perHandoffSection(false),
    })),
    response: {
      selector,
      generatedFor: "the next agent",
      generatedAt: T1,
      appliedScope: "work",
      sectionLimit: 5,
      changesCursor: "next",
      changesSince: T0,
      decisions: [handoffMemory],
      commitments: [handoffCommitment],
      preferences: [handoffMemory],
      blockers: [handoffMemory],
      counts: perHandoffSection(4),
      truncated: perHandoffSection(true),
      changes: perHandoffSection(changes),
    },
  },
  describeEnvironment: {
    request: {},
    response: {
      capabilities: {
        embedding: { model: "hash-384", dimensions: 384 },
        searchLegs: [{ leg: "vector", live: true }],
        queues: [{ name: "embed", live: true }],
      },
      scopes: [scope],
      retrievalScopePolicy: policy,
      stats: {
        memoriesByType: { decision: 3, commitment: 0, blocker: 0, fact: 0, preference: 0, pattern: 0, note: 0, event: 0 },
        activeMemories: 3,
        supersededMemories: 1,
        archivedMemories: 1,
        commitmentsByStatus: { open: 1, waiting: 0, resolved: 0, expired: 0 },
        pendingEmbeddings: 1,
        embeddings: { model: "hash-384", dimensions: 384, embedded: 2, pending: 1 },
        pendingProposals: { consolidation: 2, fact: 3, total: 5 },
        queues: [{ name: "embed", waiting: 1, active: 2, delayed: 3, failed: 4, failedByCause: { unavailable: 0, permanent: 4, error: 0 } }],
        deadLetter: 4,
        deadLetterByCause: { unavailable: 0, permanent: 4, error: 0 },
      },
    },
  },
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

/** ArchiveService: a streaming RPC's sample is one message of its stream (`more` the other kinds). */
export const archiveSamples: Record<string, Sample> = {
  import: {
    request: { options: { format: "mcp-memory" } },
    more: [{ ndjson: '{"type":"entity"}\n{"ty' }, { end: true }],
    response: {
      format: "mcp-memory",
      results: [{ line: 1, outcome: "error", id: ID, reason: "invalid_input", message: "bad" }],
      created: 3,
      skipped: 2,
      failed: 1,
    },
  },
  export: {
    request: { cursor: "c1" },
    response: { record: { kind: "memory", key: "k", tags: ["a"], validTo: null, commitment: { status: "open", dueAt: null }, confidence: 0.5 }, cursor: "c2" },
  },
  erase: {
    request: { ids: [ID], reason: "secret", reference: "case-1", dryRun: true },
    more: [{ selector: { scope: "work", project: "atlas", topic: "t", subject: "s" }, reason: "mistake" }],
    response: { erasureId: ID2, dryRun: true, erased: [ID], alreadyErased: [ID2], notFound: [ID], factsErased: 2, remaining: 1 },
  },
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
