import { AppError } from "@3ngram/errors";
import { GetMemoriesResponseSchema, MemorySchema, RememberResponseSchema } from "@3ngram/proto/memory/v1";
import { CoverageSchema, SearchHitSchema, SearchResponseSchema } from "@3ngram/proto/search/v1";
import { getMemoriesInputSchema, rememberInputSchema, searchInputSchema } from "@3ngram/schema";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { toGetMemoriesOutput, toGetMemoriesRequest, toRecord, toRememberOutput, toRememberRequest } from "../src/clients/memory.js";
import { toCoverage, toHit, toSearchOutput, toSearchRequest } from "../src/clients/search.js";

const VALID_FROM = new Date("2026-01-02T03:04:05.678Z");
const VALID_TO = new Date("2026-02-01T00:00:00.000Z");
const RECORDED = new Date("2026-01-02T03:04:06.000Z");

function protoMemory(overrides: Partial<Parameters<typeof create<typeof MemorySchema>>[1]> = {}) {
  return create(MemorySchema, {
    id: "0190c0de-0000-7000-8000-000000000001",
    memoryType: "decision",
    topic: "database",
    content: "We use PostgreSQL",
    contentLength: 17,
    truncated: false,
    scope: "personal",
    tags: ["infra"],
    status: "active",
    validFrom: timestampFromDate(VALID_FROM),
    recordedAt: timestampFromDate(RECORDED),
    embeddingState: "done",
    ...overrides,
  });
}

describe("memory mapping", () => {
  it("maps remember input to the request, leaving project unset when absent", () => {
    const input = rememberInputSchema.parse({ memoryType: "preference", topic: " editor ", content: "vim" });
    // No scope: the memory service resolves it (project mapping, then the default).
    expect(toRememberRequest(input)).toEqual({ memoryType: "preference", topic: "editor", content: "vim", tags: [], facts: [] });
    const withProject = rememberInputSchema.parse({ memoryType: "note", topic: "t", content: "c", scope: "work", project: "atlas", tags: ["a"] });
    expect(toRememberRequest(withProject)).toMatchObject({ scope: "work", project: "atlas", tags: ["a"] });
  });

  it("maps get_memories input to the request", () => {
    const input = getMemoriesInputSchema.parse({ ids: ["0190c0de-0000-7000-8000-000000000001"] });
    expect(toGetMemoriesRequest(input)).toEqual({ ids: ["0190c0de-0000-7000-8000-000000000001"], maxContentChars: 10_000 });
  });

  it("maps a stored memory to the public record with ISO timestamps and a null project", () => {
    expect(toRecord(protoMemory())).toEqual({
      id: "0190c0de-0000-7000-8000-000000000001",
      memoryType: "decision",
      topic: "database",
      content: "We use PostgreSQL",
      contentLength: 17,
      truncated: false,
      scope: "personal",
      project: null,
      status: "active",
      tags: ["infra"],
      validFrom: "2026-01-02T03:04:05.678Z",
      validTo: null,
      recordedAt: "2026-01-02T03:04:06.000Z",
      embedded: "done",
      supersededBy: null,
      commitment: null,
    });
    const closed = toRecord(protoMemory({ project: "atlas", validTo: timestampFromDate(VALID_TO), embeddingState: "pending" }));
    expect(closed).toMatchObject({ project: "atlas", validTo: "2026-02-01T00:00:00.000Z", embedded: "pending" });
  });

  it("treats a malformed peer record as our fault, not the caller's", () => {
    expect(() => toRecord(protoMemory({ recordedAt: undefined }))).toThrow(AppError);
    expect(() => toRecord(protoMemory({ recordedAt: undefined }))).toThrow(expect.objectContaining({ reason: "internal_error" }));
    // An unknown type or state fails the strict output parse (a ZodError, which the edges turn into internal_error).
    expect(() => toRecord(protoMemory({ memoryType: "gossip" }))).toThrow();
    expect(() => toRecord(protoMemory({ embeddingState: "" }))).toThrow();
  });

  it("maps the remember response to the memory reference", () => {
    const response = create(RememberResponseSchema, { memory: protoMemory({ project: "atlas" }), embedded: "pending" });
    expect(toRememberOutput(response)).toEqual({
      memory: { id: "0190c0de-0000-7000-8000-000000000001", memoryType: "decision", topic: "database", scope: "personal", project: "atlas" },
      embedded: "pending",
      facts: [],
    });
    expect(() => toRememberOutput(create(RememberResponseSchema, { embedded: "done" }))).toThrow(expect.objectContaining({ reason: "internal_error" }));
  });

  it("maps get_memories with count and notFound", () => {
    const response = create(GetMemoriesResponseSchema, { memories: [protoMemory()], notFound: ["0190c0de-0000-7000-8000-00000000dead"] });
    const output = toGetMemoriesOutput(response);
    expect(output.count).toBe(1);
    expect(output.notFound).toEqual(["0190c0de-0000-7000-8000-00000000dead"]);
    expect(output.memories[0]?.recordedAt).toBe("2026-01-02T03:04:06.000Z");
  });
});

describe("search mapping", () => {
  it("maps filters: memoryType or memoryTypes to memory_types, project or projects to projects", () => {
    expect(toSearchRequest(searchInputSchema.parse({ query: "db" }))).toEqual({
      query: "db",
      limit: 5,
      memoryTypes: [],
      projects: [],
      order: "relevance",
      projection: "full",
    });
    expect(toSearchRequest(searchInputSchema.parse({ query: "db", memoryType: "decision" })).memoryTypes).toEqual(["decision"]);
    expect(toSearchRequest(searchInputSchema.parse({ query: "db", memoryTypes: ["fact", "note"] })).memoryTypes).toEqual(["fact", "note"]);
    expect(toSearchRequest(searchInputSchema.parse({ query: "db", projects: ["atlas", "zeus"] })).projects).toEqual(["atlas", "zeus"]);
    expect(toSearchRequest(searchInputSchema.parse({ query: "db", limit: 25, scope: "work", project: "atlas", status: "archived" }))).toMatchObject({
      query: "db",
      limit: 25,
      memoryTypes: [],
      scope: "work",
      projects: ["atlas"],
      status: "archived",
    });
  });

  it("maps time filters, order, cursor and projection; a chronological listing may omit the query", () => {
    const request = toSearchRequest(
      searchInputSchema.parse({
        order: "chronological",
        scope: "work",
        recordedAfter: "2026-01-01T00:00:00Z",
        recordedBefore: "2026-01-02T00:00:00.5Z",
        asOf: { validAt: "2026-01-01T12:00:00Z" },
        cursor: "abc",
        projection: "compact",
      }),
    );
    expect(request.query).toBeUndefined();
    expect(request).toMatchObject({ order: "chronological", cursor: "abc", projection: "compact" });
    expect(request.recordedAfter).toEqual(timestampFromDate(new Date("2026-01-01T00:00:00Z")));
    expect(request.recordedBefore).toEqual(timestampFromDate(new Date("2026-01-02T00:00:00.500Z")));
    expect(request.asOf).toEqual({ validAt: timestampFromDate(new Date("2026-01-01T12:00:00Z")) });
  });

  const hit = create(SearchHitSchema, {
    id: "0190c0de-0000-7000-8000-000000000001",
    memoryType: "fact",
    topic: "db",
    excerpt: "We use Postgre",
    contentLength: 17,
    truncated: true,
    score: 0.73,
    scope: "personal",
    recordedAt: timestampFromDate(RECORDED),
  });

  it("maps a hit: the excerpt becomes content", () => {
    expect(toHit(hit)).toEqual({
      id: "0190c0de-0000-7000-8000-000000000001",
      memoryType: "fact",
      topic: "db",
      content: "We use Postgre",
      contentLength: 17,
      truncated: true,
      score: 0.73,
      scope: "personal",
      project: null,
      recordedAt: "2026-01-02T03:04:06.000Z",
    });
  });

  const coverage = {
    order: "relevance",
    legs: [
      { leg: "vector", available: false, candidates: 0 },
      { leg: "fts", available: true, candidates: 3 },
    ],
    filters: { memoryTypes: ["fact"], projects: [], status: "active", recordedAfter: timestampFromDate(RECORDED) },
    appliedScope: "work",
    asOf: { asKnownAt: timestampFromDate(RECORDED) },
    poolSize: 3,
    hasMore: false,
    abstained: true,
    evidence: { anyLexical: false, scoreGap: 0.25 },
  };

  it("maps coverage and requires it", () => {
    expect(toCoverage(create(CoverageSchema, coverage))).toEqual({
      order: "relevance",
      legs: [
        { leg: "vector", available: false, candidates: 0 },
        { leg: "fts", available: true, candidates: 3 },
      ],
      filters: { memoryTypes: ["fact"], scope: null, projects: [], status: "active", recordedAfter: "2026-01-02T03:04:06.000Z", recordedBefore: null },
      appliedScope: "work",
      asOf: { asKnownAt: "2026-01-02T03:04:06.000Z" },
      poolSize: 3,
      hasMore: false,
      abstained: true,
      evidence: { bestCosine: null, anyLexical: false, scoreGap: 0.25, termCoverage: null },
    });
    expect(() => toCoverage(undefined)).toThrow(expect.objectContaining({ reason: "internal_error" }));
    expect(() => toCoverage(create(CoverageSchema, { ...coverage, legs: [{ leg: "psychic" }] }))).toThrow();
    // A chronological listing has no pool and no legs.
    expect(toCoverage(create(CoverageSchema, { ...coverage, order: "chronological", legs: [], poolSize: undefined })).poolSize).toBeNull();
  });

  it("maps the whole response with count, hasMore, nextCursor and appliedScope", () => {
    const response = create(SearchResponseSchema, {
      hits: [hit, hit],
      hasMore: true,
      nextCursor: "next",
      projection: "full",
      coverage: { ...coverage, hasMore: true },
    });
    const output = toSearchOutput(response);
    expect(output).toMatchObject({
      count: 2,
      hasMore: true,
      nextCursor: "next",
      appliedScope: "work",
      coverage: { poolSize: 3, abstained: true, hasMore: true },
    });
    expect(output.hits).toHaveLength(2);
  });

  it("maps a compact page to compact hits only", () => {
    const response = create(SearchResponseSchema, { hits: [hit], hasMore: false, projection: "compact", coverage: { ...coverage, appliedScope: undefined } });
    const output = toSearchOutput(response);
    expect(output.hits).toEqual([{ id: hit.id, memoryType: "fact", topic: "db", score: 0.73 }]);
    expect(output.nextCursor).toBeUndefined();
    expect(output.appliedScope).toBeUndefined();
  });
});
